#include <doctest/doctest.h>

#include <string>

#include "archive/predicate_text.hpp"

using namespace shardctl::archive;

namespace {

// "" when the text passes, else "CHARACTER: what".
std::string screened(std::string_view text) {
  auto flaw = screen_predicate(text);
  if (!flaw) return "";
  return std::to_string(flaw->character) + ": " + flaw->what;
}

}  // namespace

TEST_CASE("a predicate that stays one expression passes the screen") {
  for (const char* ok : {"created_at < now() - interval '400 days'", "status IN ('done', 'void') AND (id % 2 = 0)",
                         "note = 'it''s )'", "note = E'a\\') OR (true'", "note = e'\\\\' AND (true)", "\"we)ird\" > 1",
                         "\"a\"\")\" = 1", "note = $$ ) ; -- $$", "note = $tag$ $$ ) $tag$", "a$b$ > 1 AND (x)",
                         "note = U&'\\0041)' AND true", "U&\"d)\" = 1", "note = N'x)'", "b = B'101' AND x = X'1F'",
                         "note LIKE '%--%' AND note NOT LIKE '/*%'", "x / y > 2 AND z - 1 > -1", "arr[1] > 0",
                         "  (((x)))  ", "note = 'caf\xC3\xA9 \xEF\xBB\xBF'", "f(x, 'a;b')"})
    CHECK_MESSAGE(screened(ok) == "", ok);
}

TEST_CASE("the screen refuses what could reach past the parentheses, and says where") {
  CHECK(screened("o_orderkey % 10 = 0) OR (o_orderkey % 10 = 0") == "20: ')' closes a parenthesis the predicate did not open");
  CHECK(screened("true) or (true") == "5: ')' closes a parenthesis the predicate did not open");
  CHECK(screened("(a > 1") == "1: '(' is never closed");
  CHECK(screened("((a > 1) AND (b") == "14: '(' is never closed");
  CHECK(screened("true; COMMIT") == "5: ';' would end the statement");
  CHECK(screened("a > 1 -- )") == "7: a comment ('--') is not allowed");
  CHECK(screened("a >-- 1") == "4: a comment ('--') is not allowed");  // inside what would be an operator
  CHECK(screened("a > 1 /* ) */") == "7: a comment ('/*') is not allowed");
  CHECK(screened("note = 'x") == "8: a string is never closed");
  CHECK(screened("note = E'x\\'") == "8: a string is never closed");  // the backslash escapes the quote
  CHECK(screened("\"x = 1") == "1: a quoted identifier is never closed");
  CHECK(screened("note = $a$ x") == "8: dollar-quoted text is never closed");
  CHECK(screened("note = U&'x") == "8: a string is never closed");
  // In a plain string a backslash is only a backslash (standard_conforming_strings).
  CHECK(screened("note = 'a\\') OR (true") == "12: ')' closes a parenthesis the predicate did not open");
  // An E'' string continued on the next line keeps its backslash escapes (so the server reads
  // "a'b) OR (true" as one string, and the screen must not see a parenthesis there) ...
  CHECK(screened("note = E'x'\n'a\\'b) OR (true'") == "");
  CHECK(screened("note = E'x' \n\t 'a\\') OR (true") == "8: a string is never closed");
  // ... while a plain string's continuation has none, and without a line break there is none.
  CHECK(screened("note = 'x'\n'a\\') OR (true") == "16: ')' closes a parenthesis the predicate did not open");
  CHECK(screened("note = E'x' 'a\\') OR (true") == "17: ')' closes a parenthesis the predicate did not open");
  CHECK(screened("") == "0: it is empty");
  CHECK(screened(" \t\n") == "0: it is empty");
}

TEST_CASE("bytes that are not text are refused before anything else") {
  CHECK(screened(std::string("true\0) OR (true", 15)) == "5: it contains a NUL byte");
  CHECK(screened(std::string("note = 'a\0'", 11)) == "10: it contains a NUL byte");  // even inside a string
  CHECK(screened("\xEF\xBB\xBFtrue") == "1: it contains a byte order mark (U+FEFF)");
  CHECK(screened("x\xEF\xBB\xBF > 1") == "2: it contains a byte order mark (U+FEFF)");
  CHECK(screened("note = 'caf\xC3\xA9' AND \xff") == "19: it is not UTF-8");  // positions count characters
  CHECK(screened("\xC0\xAF") == "1: it is not UTF-8");                       // an overlong '/'
}

TEST_CASE("positions count characters, as the server's do") {
  CHECK(characters_in("caf\xC3\xA9)", 5) == 4);
  CHECK(screened("'\xC3\xA9' = x)") == "8: ')' closes a parenthesis the predicate did not open");
}
