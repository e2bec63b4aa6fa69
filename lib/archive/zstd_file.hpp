// One archive file: COPY text compressed with zstd, written to a temporary name, synced, and
// renamed into place, so a file under its final name is always whole (`zstd -dc FILE | psql -c
// "COPY t FROM STDIN"` loads it with no shardctl). Reading checks the SHA-256 the manifest holds.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

#include "digest/sha256.hpp"

namespace shardctl::archive {

struct WrittenFile {
  std::filesystem::path path;
  std::uint64_t raw_bytes = 0;         // COPY text before compression
  std::uint64_t compressed_bytes = 0;  // the file's size
  std::string sha256;                  // of the file as stored
};

class ZstdFileWriter {
 public:
  // Creates `path`'s directory; writes to "path.tmp" until finish().
  explicit ZstdFileWriter(std::filesystem::path path, int level = 3);
  ~ZstdFileWriter();  // an unfinished file is removed
  ZstdFileWriter(const ZstdFileWriter&) = delete;
  ZstdFileWriter& operator=(const ZstdFileWriter&) = delete;

  void write(std::string_view bytes);
  // Ends the frame, fsyncs the file, renames it into place and fsyncs the directory.
  WrittenFile finish();

 private:
  void emit(std::string_view compressed);

  std::filesystem::path path_, tmp_;
  std::FILE* file_ = nullptr;
  void* cctx_ = nullptr;  // ZSTD_CCtx
  digest::Sha256 sha_;
  WrittenFile result_;
  bool finished_ = false;
};

// Streams the decompressed content of `path` to `sink` in chunks, and checks the file's SHA-256
// against `expected_sha256` (a data Error, exit 65, when it differs or the frame is damaged).
void read_zstd_file(const std::filesystem::path& path, const std::string& expected_sha256,
                    const std::function<void(std::string_view)>& sink);

// Writes `text` to `path` atomically (temporary file, fsync, rename, fsync of the directory).
void write_file_atomically(const std::filesystem::path& path, std::string_view text);

}  // namespace shardctl::archive
