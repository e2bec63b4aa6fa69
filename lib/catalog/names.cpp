#include "catalog/names.hpp"

#include <cctype>

#include "core/error.hpp"

namespace shardctl::catalog {
namespace {

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return {};
  auto e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

bool plain_identifier(const std::string& s) {
  if (s.empty() || s.size() > 63) return false;
  if (!(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$')) return false;
  return true;
}

// Splits on dots outside double quotes.
std::vector<std::string> split_dotted(const std::string& s) {
  std::vector<std::string> parts{""};
  bool quoted = false;
  for (char c : s) {
    if (c == '"') quoted = !quoted;
    if (c == '.' && !quoted) {
      parts.emplace_back();
      continue;
    }
    parts.back() += c;
  }
  return parts;
}

bool valid_part(const std::string& p) {
  if (p.size() >= 2 && p.front() == '"' && p.back() == '"') return p.size() > 2;
  return plain_identifier(p);
}

std::string unquote(const std::string& p) {
  if (p.size() >= 2 && p.front() == '"' && p.back() == '"') return p.substr(1, p.size() - 2);
  return p;
}

}  // namespace

std::string quote_ident(const std::string& raw) {
  std::string out = "\"";
  for (char c : raw) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

void require_name(const std::string& what, const std::string& name) {
  bool ok = !name.empty() && name.size() <= 63 &&
            (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_');
  for (char c : name)
    ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-');
  if (!ok)
    throw usage_error("invalid " + what + " name '" + name + "'",
                      "use a letter or _, then letters, digits, _ . or - (at most 63 characters)");
}

std::string qualify_table(const std::string& table) {
  auto parts = split_dotted(trim(table));
  if (parts.size() > 2 || parts.empty())
    throw usage_error("invalid table name '" + table + "'", "write TABLE or SCHEMA.TABLE");
  for (auto& p : parts) {
    p = trim(p);
    if (!valid_part(p))
      throw usage_error("invalid table name '" + table + "'", "write TABLE or SCHEMA.TABLE");
  }
  if (parts.size() == 1) return "public." + parts[0];
  return parts[0] + "." + parts[1];
}

std::string quote_qualified(const std::string& qualified) {
  auto parts = split_dotted(qualified);
  std::string out;
  for (const auto& p : parts) {
    if (!out.empty()) out += '.';
    out += quote_ident(unquote(p));
  }
  return out;
}

TableColumns parse_table_columns(const std::string& text) {
  auto open = text.find('(');
  auto close = text.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open ||
      !trim(text.substr(close + 1)).empty())
    throw usage_error("'" + text + "' is not TABLE(COL, ...)", "e.g. --child 'order_lines(customer_id, order_id)'");
  TableColumns out;
  out.table = qualify_table(text.substr(0, open));
  std::string inner = text.substr(open + 1, close - open - 1);
  std::string col;
  auto flush = [&] {
    col = trim(col);
    if (!valid_part(col)) throw usage_error("invalid column name '" + col + "' in '" + text + "'");
    out.columns.push_back(col);
    col.clear();
  };
  for (char c : inner) {
    if (c == ',') flush();
    else col += c;
  }
  flush();
  return out;
}

std::string text_array_literal(const std::vector<std::string>& items) {
  std::string out = "{";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += ',';
    out += '"';
    for (char c : items[i]) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  return out + "}";
}

}  // namespace shardctl::catalog
