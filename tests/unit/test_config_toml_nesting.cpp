// The depth pre-scan of shardctl.toml (config/toml_nesting.hpp): toml++ 3.3 died (SIGSEGV) on a
// key of 40,000 dotted parts. Every dotted key part, [table.header] part, array and inline table
// is a level; beyond max_input_nesting the config is refused (65) at file:line:col.
#include <doctest/doctest.h>

#include <string>

#include "config/config.hpp"
#include "config/toml_nesting.hpp"
#include "core/error.hpp"
#include "core/nesting.hpp"
#include "support.hpp"

using namespace shardctl;
using config::toml_too_deep_at;

namespace {

constexpr auto toml_npos = std::string_view::npos;

std::string dotted_key(int parts) {
  std::string k = "a";
  for (int i = 1; i < parts; ++i) k += ".a";
  return k;
}

std::string toml_refusal(const std::string& text) {
  return test::data_error_of([&] { config::parse_config(text, "deep.toml"); });
}

}  // namespace

TEST_CASE("dotted keys: as many parts as the limit pass, one more is refused at that part") {
  CHECK(toml_too_deep_at(dotted_key(8) + " = 1\n", 8) == toml_npos);
  std::string text = "x = 1\n" + dotted_key(9) + " = 1\n";
  CHECK(toml_too_deep_at(text, 8) == 6 + 16);  // the 9th "a" of the second line
  // Spaces around the dots and quoted parts (a dot inside quotes is no level).
  CHECK(toml_too_deep_at("a . \"b.c.d\" . 'e.f' = 1", 3) == toml_npos);
  CHECK(toml_too_deep_at("a . \"b.c.d\" . 'e.f' . g = 1", 3) != toml_npos);
}

TEST_CASE("table headers set the depth of the keys below them") {
  CHECK(toml_too_deep_at("[a.b.c]\nx = 1\n", 4) == toml_npos);
  CHECK(toml_too_deep_at("[a.b.c]\nx.y = 1\n", 4) == 10);
  CHECK(toml_too_deep_at("[" + dotted_key(5) + "]\n", 4) == 9);
  // [[x]]: an array whose tables are one level further down.
  CHECK(toml_too_deep_at("[[a.b]]\nc = 1\n", 4) == toml_npos);
  CHECK(toml_too_deep_at("[[a.b]]\nc = 1\n", 3) == 8);
  CHECK(toml_too_deep_at("[[a.b.c]]\n", 3) == 0);
  // A later, shallower header resets the depth.
  CHECK(toml_too_deep_at("[a.b.c]\n[d]\ne.f.g = 1\n", 4) == toml_npos);
  // A header after a byte order mark is still a header.
  CHECK(toml_too_deep_at("\xEF\xBB\xBF[" + dotted_key(10) + "]\n", 4) != toml_npos);
}

TEST_CASE("arrays and inline tables are levels; strings and comments are not") {
  CHECK(toml_too_deep_at("a = [[[1]]]\n", 4) == toml_npos);
  CHECK(toml_too_deep_at("a = [[[[1]]]]\n", 4) == toml_npos);  // the arrays sit at 1 to 4
  CHECK(toml_too_deep_at("a = [[[[[1]]]]]\n", 4) == 8);
  CHECK(toml_too_deep_at("a = { b = { c = 1 } }\n", 4) == toml_npos);
  CHECK(toml_too_deep_at("a = { b = { c.d.e = 1 } }\n", 4) == 16);
  CHECK(toml_too_deep_at("a = [ { b = [1] }, { c = [[2]] } ]\n", 3) == 26);
  // Multi-line arrays with comments, trailing commas and numbers with dots.
  CHECK(toml_too_deep_at("a = [\n  1.5, # [[[[[\n  [2.5e3, 3],\n]\nb = 1979-05-27T07:32:00Z\n", 2) == toml_npos);
  for (const char* s : {"a = \"[[[[[[[{{{{{\"\n", "a = '[[[[[[[[[['\n", "a = \"\"\"\n[[[[[[\n\"\"\"\n", "a = '''[[[[[[\n'''\n",
                        "a = \"\\\"[[[[[[[[\"\n", "# a.b.c.d.e.f = [[[[[\n", "a = \"\"\"x\"\"\"\"\nb = 1\n"})
    CHECK_MESSAGE(toml_too_deep_at(s, 1) == toml_npos, s);
}

TEST_CASE("malformed text is never refused for depth it does not have, and never hangs") {
  for (const char* s : {"[", "[[", "a = ", "a = [", "a = \"unterminated\n[b]\n", "= 1", ". = 1", "a..b = 1", "a = }}}]]]",
                        "a = '''never ends", "\"\"\" = 1", "a = \"\\", "[a.]\n", "{ = "})
    CHECK_MESSAGE(toml_too_deep_at(s, 2) == toml_npos, s);
}

TEST_CASE("parse_config refuses a 40,000-part key and 100,000 nested arrays at file:line:col, without a crash") {
  auto dotted = toml_refusal("catalog = \"host=x\"\n" + dotted_key(40000) + " = 1\n");
  CHECK(dotted.find("deep.toml:2:129: nested more than 64 levels deep") == 0);
  auto header = toml_refusal("[" + dotted_key(40000) + "]\n");
  CHECK(header.find("deep.toml:1:130: nested more than 64 levels deep") == 0);
  auto arrays = toml_refusal("x = " + std::string(100000, '[') + std::string(100000, ']') + "\n");
  CHECK(arrays.find("deep.toml:1:69: nested more than 64 levels deep") == 0);
  // The example config of shardctl.toml(5) passes the scan (and parses).
  std::string example = R"(catalog = "host=db0 dbname=shardctl_catalog"
[defaults]
batch_size = 1000
[check]
warning = ["orphans", "mapping_readonly_shard"]
[shards.shard_4]
capacity_bytes = 500000000000
weight = 2
[query]
user = "shardctl_read"
[[archive.job]]
name = "old-orders"
table = "public.orders"
where = "created_at < now() - interval '400 days'"
to = "dir:/var/lib/shardctl/archive"
)";
  // [[archive.job]] keys are the deepest: archive, job, its table, the key.
  CHECK(toml_too_deep_at(example, 4) == toml_npos);
  CHECK(toml_too_deep_at(example, 3) != toml_npos);
  CHECK(toml_refusal(example).empty());
}
