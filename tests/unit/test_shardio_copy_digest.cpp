#include <doctest/doctest.h>

#include <string>

#include "shardio/copy_digest.hpp"

using shardctl::shardio::CopyDigest;

namespace {

std::string be16(int v) { return {static_cast<char>((v >> 8) & 0xff), static_cast<char>(v & 0xff)}; }
std::string be32(int v) {
  return {static_cast<char>((v >> 24) & 0xff), static_cast<char>((v >> 16) & 0xff), static_cast<char>((v >> 8) & 0xff),
          static_cast<char>(v & 0xff)};
}
const std::string header = std::string("PGCOPY\n\377\r\n\0", 11) + be32(0) + be32(0);
const std::string trailer = be16(-1);
// A tuple of two fields: an int4 and a text (NULL when empty).
std::string tuple(int n, const std::string& text) {
  std::string t = be16(2) + be32(4) + be32(n);
  t += text.empty() ? be32(-1) : be32(static_cast<int>(text.size())) + text;
  return t;
}

std::string digest_of(const std::string& stream, std::size_t chunk) {
  CopyDigest d(true);
  for (std::size_t i = 0; i < stream.size(); i += chunk) d.add(std::string_view(stream).substr(i, chunk));
  CHECK(d.complete());
  return d.text();
}

}  // namespace

TEST_CASE("binary COPY digest: counts tuples, ignores order and chunking, sees every byte") {
  std::string ab = header + tuple(1, "a") + tuple(2, "") + tuple(3, "ccc") + trailer;
  std::string ba = header + tuple(3, "ccc") + tuple(1, "a") + tuple(2, "") + trailer;
  auto whole = digest_of(ab, ab.size());
  CHECK(whole.rfind("3:xxh3:", 0) == 0);
  for (std::size_t chunk = 1; chunk < 12; ++chunk) CHECK(digest_of(ab, chunk) == whole);
  CHECK(digest_of(ba, 5) == whole);
  CHECK(digest_of(header + tuple(1, "b") + tuple(2, "") + tuple(3, "ccc") + trailer, 7) != whole);
  CHECK(digest_of(header + tuple(1, "a") + tuple(2, "x") + tuple(3, "ccc") + trailer, 7) != whole);  // NULL vs value
  CHECK(digest_of(header + tuple(1, "a") + tuple(3, "ccc") + trailer, 7) != whole);
}

TEST_CASE("binary COPY digest: a stream cut inside a tuple is incomplete") {
  CopyDigest d(true);
  std::string s = header + tuple(1, "abc");
  d.add(std::string_view(s).substr(0, s.size() - 1));
  CHECK_FALSE(d.complete());
  CHECK(d.rows() == 0);
}

TEST_CASE("text COPY digest: rows by newline, tagged apart from binary") {
  CopyDigest a(false), b(false);
  a.add("1\ta\n2\t\\N\n");
  b.add("2\t\\N\n1\ta\n");
  CHECK(a.text() == b.text());
  CHECK(a.text().rfind("2:xxh3t:", 0) == 0);
  CHECK(shardctl::shardio::is_copy_digest(a.text()));
  CHECK_FALSE(shardctl::shardio::is_copy_digest("2:12345"));
}

TEST_CASE("binary COPY digest: a table read in parts merges to the digest of the whole") {
  std::string whole = header + tuple(1, "a") + tuple(2, "") + tuple(3, "ccc") + trailer;
  CopyDigest p1(true), p2(true), empty(true);
  p1.add(header + tuple(3, "ccc") + trailer);
  p2.add(header + tuple(2, "") + tuple(1, "a") + trailer);
  empty.add(header + trailer);
  p1.merge(p2);
  p1.merge(empty);
  CHECK(p1.text() == digest_of(whole, whole.size()));
  CHECK(p1.rows() == 3);
  CopyDigest text(false);
  CHECK_THROWS(p1.merge(text));
}

TEST_CASE("binary COPY digest: where a stream may be cut into separate COPY statements") {
  CopyDigest d(true);
  CHECK_FALSE(d.at_row_end());  // nothing yet
  d.add(header.substr(0, 5));
  CHECK_FALSE(d.at_row_end());  // inside the header
  d.add(header.substr(5));
  CHECK(d.at_row_end());  // after the header, before any row
  std::string t = tuple(7, "seven");
  d.add(t.substr(0, 9));
  CHECK_FALSE(d.at_row_end());  // inside a row
  d.add(t.substr(9));
  CHECK(d.at_row_end());
  d.add(trailer);
  CHECK_FALSE(d.at_row_end());  // the trailer ends the stream: nothing may follow a cut
  CHECK(d.complete());
  CHECK_FALSE(CopyDigest(false).at_row_end());  // text streams are never cut
}
