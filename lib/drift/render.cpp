#include "drift/render.hpp"

#include <algorithm>

namespace shardctl::drift {
namespace {

std::string expected_label(const Report& r) { return r.reference ? *r.reference : std::string("majority"); }

// One shard's differences as text lines (also the JUnit failure body).
std::string diff_text(const Report& r, const ShardReport& s) {
  std::string exp = expected_label(r);
  std::size_t w = std::max(exp.size(), s.outcome.shard.size()) + 1;
  auto label = [&](const std::string& who) {
    std::string l = who + ":";
    l.resize(w + 1, ' ');
    return l;
  };
  std::string out;
  for (const auto& d : s.differences) {
    std::string change(to_text(d.change));
    change.resize(10, ' ');
    out += "  ";
    out += change;
    out += d.key;
    out += '\n';
    if (d.change != Change::extra) {
      out += "      ";
      out += label(exp);
      out += d.expected;
      out += '\n';
    }
    if (d.change != Change::missing) {
      out += "      ";
      out += label(s.outcome.shard);
      out += d.actual;
      out += '\n';
    }
  }
  return out;
}

std::string status_of(const ShardReport& s) {
  if (!s.outcome.ok()) return std::string(to_text(s.outcome.state));
  return s.differences.empty() ? "ok" : "drift";
}

}  // namespace

void print_text(std::ostream& out, const Report& r) {
  std::vector<std::string> same;
  for (const auto& s : r.shards) {
    if (!s.outcome.ok()) {
      out << s.outcome.shard << ": " << to_text(s.outcome.state) << ": " << s.outcome.error << '\n';
      continue;
    }
    if (s.differences.empty()) {
      same.push_back(s.outcome.shard);
      continue;
    }
    out << s.outcome.shard << ": " << s.differences.size() << " difference(s) from " << r.basis() << '\n'
        << diff_text(r, s);
  }
  if (!r.compared) {
    out << "not compared: the reference shard " << r.reference.value_or("") << " could not be read\n";
    return;
  }
  if (!same.empty()) {
    std::string names;
    for (const auto& n : same) {
      if (!names.empty()) names += ", ";
      names += n;
    }
    out << names << ": no drift\n";
  }
  for (const auto& s : r.offline) out << s << ": offline, not compared\n";
  std::size_t read = r.shards.size() - r.unreadable();
  if (r.differing())
    out << "drift: " << r.differing() << " of " << read << " shard(s) differ from " << r.basis() << '\n';
  else if (read)
    out << "no drift: " << read << " shard(s) alike" << (r.unreadable() ? " (some shards could not be read)" : "") << '\n';
  else if (r.shards.empty() && r.offline.empty())
    out << "nothing to compare: no shard is registered (`shardctl shard add`)\n";
}

nlohmann::json to_json(const Report& r) {
  nlohmann::json shards = nlohmann::json::array();
  for (const auto& s : r.shards) {
    nlohmann::json diffs = nlohmann::json::array();
    for (const auto& d : s.differences) {
      diffs.push_back({{"change", to_text(d.change)},
                       {"object", d.key},
                       {"kind", kind_of(d.key)},
                       {"name", name_of(d.key)},
                       {"expected", d.change == Change::extra ? nlohmann::json(nullptr) : nlohmann::json(d.expected)},
                       {"actual", d.change == Change::missing ? nlohmann::json(nullptr) : nlohmann::json(d.actual)}});
    }
    shards.push_back({{"shard", s.outcome.shard},
                      {"status", status_of(s)},
                      {"objects", s.objects},
                      {"fingerprint", s.fingerprint.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.fingerprint)},
                      {"error", s.outcome.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.outcome.error)},
                      {"elapsed_ms", s.outcome.elapsed.count()},
                      {"differences", diffs}});
  }
  return {{"basis", r.reference ? "reference" : "majority"},
          {"reference", r.reference ? nlohmann::json(*r.reference) : nlohmann::json(nullptr)},
          {"compared", r.compared},
          {"drift", r.differing() > 0},
          {"differing", r.differing()},
          {"unreadable", r.unreadable()},
          {"shards", shards},
          {"offline", r.offline}};
}

std::vector<output::JunitCase> junit_cases(const Report& r) {
  std::vector<output::JunitCase> cases;
  for (const auto& s : r.shards) {
    output::JunitCase c;
    c.classname = "shardctl.schema.drift";
    c.name = s.outcome.shard;
    c.seconds = static_cast<double>(s.outcome.elapsed.count()) / 1000.0;
    if (!s.outcome.ok()) {
      c.failure = std::string(to_text(s.outcome.state)) + ": " + s.outcome.error;
    } else if (!r.compared) {
      c.skipped = true;
    } else if (!s.differences.empty()) {
      c.failure = std::to_string(s.differences.size()) + " difference(s) from " + r.basis();
      c.details = diff_text(r, s);
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

}  // namespace shardctl::drift
