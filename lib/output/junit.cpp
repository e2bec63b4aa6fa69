#include "output/junit.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"

namespace shardctl::output {

namespace {

// XML 1.0 text: the five special characters escaped, control characters XML cannot carry
// (everything below 0x20 but tab, newline and carriage return) replaced by '?'.
std::string escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r')
          out += '?';
        else
          out += c;
    }
  }
  return out;
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", s);
  return buf;
}

}  // namespace

std::string junit_xml(const std::string& suite, const std::vector<JunitCase>& cases) {
  std::size_t failures = 0, skipped = 0;
  double total = 0;
  for (const auto& c : cases) {
    failures += c.failure ? 1 : 0;
    skipped += c.skipped ? 1 : 0;
    total += c.seconds;
  }
  std::string x = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  x += "<testsuites>\n";
  x += "  <testsuite name=\"" + escape(suite) + "\" tests=\"" + std::to_string(cases.size()) + "\" failures=\"" +
       std::to_string(failures) + "\" errors=\"0\" skipped=\"" + std::to_string(skipped) + "\" time=\"" +
       seconds_text(total) + "\">\n";
  for (const auto& c : cases) {
    x += "    <testcase classname=\"" + escape(c.classname) + "\" name=\"" + escape(c.name) + "\" time=\"" +
         seconds_text(c.seconds) + "\"";
    if (!c.failure && !c.skipped) {
      x += "/>\n";
      continue;
    }
    x += ">\n";
    if (c.failure) x += "      <failure message=\"" + escape(*c.failure) + "\">" + escape(c.details) + "</failure>\n";
    if (c.skipped) x += "      <skipped/>\n";
    x += "    </testcase>\n";
  }
  x += "  </testsuite>\n</testsuites>\n";
  return x;
}

void write_junit(const std::string& path, const std::string& suite, const std::vector<JunitCase>& cases) {
  namespace fs = std::filesystem;
  fs::path target(path);
  fs::path tmp = target;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << junit_xml(suite, cases);
    out.flush();
    if (!out) throw usage_error("cannot write the JUnit report " + path, "check that its directory exists and is writable");
  }
  std::error_code ec;
  fs::rename(tmp, target, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw usage_error("cannot write the JUnit report " + path + ": " + ec.message());
  }
}

}  // namespace shardctl::output
