// What several unit test files share, defined once (unit_tests compiles its files in unity
// batches, so two files' private copies of one helper would collide).
#pragma once

#include <doctest/doctest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <utility>

#include "core/error.hpp"

namespace shardctl::test {

// The message of the Error that `body` throws, checked to be of `kind`; empty when it throws none.
template <class Body>
std::string error_of(ErrorKind kind, Body&& body) {
  try {
    body();
  } catch (const Error& e) {
    CHECK(e.kind() == kind);
    return e.what();
  }
  return {};
}

// The message of the bad-input error (65) that `body` throws; empty when it throws none.
template <class Body>
std::string data_error_of(Body&& body) {
  return error_of(ErrorKind::data, std::forward<Body>(body));
}

// The message of the usage error (64) that `body` throws; empty when it throws none.
template <class Body>
std::string usage_error_of(Body&& body) {
  return error_of(ErrorKind::usage, std::forward<Body>(body));
}

// A fresh directory under /tmp, removed with all it holds when it goes out of scope.
struct ScratchDir {
  std::filesystem::path dir;
  ScratchDir() {
    char tmpl[] = "/tmp/shardctl-unit-XXXXXX";
    dir = mkdtemp(tmpl);
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  // Writes `text` to DIR/name byte for byte.
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(dir / name, std::ios::binary) << text;
  }
};

}  // namespace shardctl::test
