#include "query/render.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace shardctl::query {
namespace {

// Built-in type OIDs (pg_type.h; stable across servers since they are below 16384).
constexpr unsigned kBool = 16, kInt8 = 20, kInt2 = 21, kInt4 = 23, kOid = 26, kJson = 114, kFloat4 = 700,
                   kFloat8 = 701, kNumeric = 1700, kJsonb = 3802;

std::string json_string(std::string_view s) {
  return nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Characters on screen, roughly: UTF-8 continuation bytes do not count.
std::size_t display_width(const std::string& s) {
  return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string one_line(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else out += c;
  }
  return out;
}

class TextSink : public Sink {
 public:
  TextSink(std::ostream& out, std::size_t align_rows) : out_(out), align_rows_(std::max<std::size_t>(1, align_rows)) {}

  void begin(const std::vector<Column>& columns) override {
    header_ = {"shard"};
    for (const auto& c : columns) header_.push_back(c.name);
  }
  void row(const std::string& shard, const std::vector<Cell>& cells) override {
    std::vector<std::string> line{shard};
    for (const auto& c : cells) line.push_back(c ? one_line(*c) : std::string());
    if (flushed_) return write(line);
    held_.push_back(std::move(line));
    if (held_.size() >= align_rows_) flush();
  }
  void finish(const Summary&) override {
    if (!header_.empty() && !flushed_) flush();
    out_.flush();
  }
  bool closed() const override { return !out_.good(); }

 private:
  void flush() {
    width_.assign(header_.size(), 0);
    for (std::size_t i = 0; i < header_.size(); ++i) width_[i] = display_width(header_[i]);
    for (const auto& r : held_)
      for (std::size_t i = 0; i < r.size() && i < width_.size(); ++i) width_[i] = std::max(width_[i], display_width(r[i]));
    flushed_ = true;
    write(header_);
    for (const auto& r : held_) write(r);
    held_.clear();
    held_.shrink_to_fit();
  }
  void write(const std::vector<std::string>& cells) {
    std::string text;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      text += cells[i];
      if (i + 1 < cells.size()) {
        std::size_t w = display_width(cells[i]);
        text.append((i < width_.size() && width_[i] > w ? width_[i] - w : 0) + 2, ' ');
      }
    }
    // Trailing spaces of empty last cells help nobody.
    text.erase(text.find_last_not_of(' ') + 1);
    text += '\n';
    out_ << text;
  }

  std::ostream& out_;
  std::size_t align_rows_;
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> held_;
  std::vector<std::size_t> width_;
  bool flushed_ = false;
};

class CsvSink : public Sink {
 public:
  explicit CsvSink(std::ostream& out) : out_(out) {}
  void begin(const std::vector<Column>& columns) override {
    std::string line = "shard";
    for (const auto& c : columns) {
      line += ',';
      line += csv_field(std::string_view(c.name));
    }
    line += '\n';
    out_ << line;
  }
  void row(const std::string& shard, const std::vector<Cell>& cells) override {
    std::string line = csv_field(std::string_view(shard));
    for (const auto& c : cells) {
      line += ',';
      line += csv_field(c);
    }
    line += '\n';
    out_ << line;
  }
  void finish(const Summary&) override { out_.flush(); }
  bool closed() const override { return !out_.good(); }

 private:
  std::ostream& out_;
};

class JsonSink : public Sink {
 public:
  explicit JsonSink(std::ostream& out) : out_(out) {}
  void begin(const std::vector<Column>& columns) override {
    std::string text = "{\"columns\": [{\"name\": \"shard\", \"type\": \"text\"}";
    for (const auto& c : columns) {
      text += ", {\"name\": ";
      text += json_string(c.name);
      text += ", \"type\": ";
      text += json_string(c.type);
      text += '}';
      oids_.push_back(c.oid);
    }
    text += "],\n\"rows\": [";
    out_ << text;
    begun_ = true;
  }
  void row(const std::string& shard, const std::vector<Cell>& cells) override {
    std::string text = first_row_ ? "\n[" : ",\n[";
    first_row_ = false;
    text += json_string(shard);
    for (std::size_t i = 0; i < cells.size(); ++i) {
      text += ", ";
      text += json_value(cells[i], i < oids_.size() ? oids_[i] : 0);
    }
    text += ']';
    out_ << text;
  }
  void finish(const Summary& summary) override {
    if (!begun_) begin({});
    // Keys in a fixed order, shard first: a reader scanning the document finds it at once.
    nlohmann::ordered_json shards = nlohmann::ordered_json::array();
    for (const auto& s : summary.shards) {
      nlohmann::ordered_json error = s.outcome.error.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(s.outcome.error);
      shards.push_back({{"shard", s.outcome.shard},
                        {"status", to_text(s.outcome.state)},
                        {"rows", s.rows},
                        {"limited", s.limited},
                        {"error", error},
                        {"elapsed_ms", s.outcome.elapsed.count()}});
    }
    std::string text = first_row_ ? "],\n" : "\n],\n";
    text += "\"shards\": ";
    text += shards.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    text += ",\n\"offline\": ";
    text += nlohmann::json(summary.offline).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    text += ",\n\"partial\": ";
    text += summary.partial() ? "true" : "false";
    text += "}\n";
    out_ << text;
    out_.flush();
  }
  bool closed() const override { return !out_.good(); }

 private:
  std::ostream& out_;
  std::vector<unsigned> oids_;
  bool begun_ = false;
  bool first_row_ = true;
};

bool is_plain_number(std::string_view v) {
  // PostgreSQL prints NaN, Infinity and -Infinity for floats and numeric: not JSON numbers.
  return !v.empty() && v.find_first_not_of("0123456789+-.eE") == std::string_view::npos;
}

}  // namespace

std::string csv_field(const std::optional<std::string_view>& value) {
  if (!value) return {};
  std::string_view v = *value;
  bool quote = v.empty() || v.find_first_of(",\"\r\n") != std::string_view::npos || v.front() == ' ' || v.back() == ' ';
  if (!quote) return std::string(v);
  std::string out = "\"";
  for (char c : v) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string json_value(const std::optional<std::string_view>& value, unsigned oid) {
  if (!value) return "null";
  std::string_view v = *value;
  switch (oid) {
    case kBool: return v == "t" ? "true" : "false";
    case kInt2:
    case kInt4:
    case kInt8:
    case kOid:
    case kFloat4:
    case kFloat8:
    case kNumeric:
      if (is_plain_number(v)) return std::string(v);
      break;
    case kJson:
    case kJsonb: return std::string(v);  // the server checked it is JSON
    default: break;
  }
  return json_string(v);
}

std::unique_ptr<Sink> text_sink(std::ostream& out, std::size_t align_rows) { return std::make_unique<TextSink>(out, align_rows); }
std::unique_ptr<Sink> csv_sink(std::ostream& out) { return std::make_unique<CsvSink>(out); }
std::unique_ptr<Sink> json_sink(std::ostream& out) { return std::make_unique<JsonSink>(out); }

}  // namespace shardctl::query
