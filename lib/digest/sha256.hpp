// SHA-256 of a byte stream (libcrypto): archive manifests and migration-file checksums. For a
// file, `sha256sum FILE` prints the same digest, so an operator can check it without shardctl.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace shardctl::digest {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void update(std::string_view bytes);
  // Lowercase hex of the digest; the object is finished afterwards.
  std::string hex_digest();

 private:
  struct Ctx;
  std::unique_ptr<Ctx> ctx_;
};

}  // namespace shardctl::digest
