#include "archive/zstd_file.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <zstd.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <vector>

#include "core/error.hpp"
#include "core/input_file.hpp"

namespace shardctl::archive {
namespace fs = std::filesystem;

namespace {

[[noreturn]] void io_failure(const std::string& what, const fs::path& path) {
  throw unavailable_error(what + " " + path.string() + ": " + std::strerror(errno),
                          "is the archive directory writable, and is there space?");
}

void fsync_dir(const fs::path& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) io_failure("cannot open directory", dir);
  int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) io_failure("cannot sync directory", dir);
}

ZSTD_CCtx* cctx_of(void* p) { return static_cast<ZSTD_CCtx*>(p); }

}  // namespace

ZstdFileWriter::ZstdFileWriter(fs::path path, int level) : path_(std::move(path)), tmp_(path_.string() + ".tmp") {
  std::error_code ec;
  fs::create_directories(path_.parent_path(), ec);
  if (ec) throw unavailable_error("cannot create directory " + path_.parent_path().string() + ": " + ec.message());
  file_ = std::fopen(tmp_.c_str(), "wb");
  if (!file_) io_failure("cannot create", tmp_);
  cctx_ = ZSTD_createCCtx();
  if (!cctx_) throw internal_error("zstd: out of memory");
  ZSTD_CCtx_setParameter(cctx_of(cctx_), ZSTD_c_compressionLevel, level);
  ZSTD_CCtx_setParameter(cctx_of(cctx_), ZSTD_c_checksumFlag, 1);  // zstd -t can check a file alone
  result_.path = path_;
}

ZstdFileWriter::~ZstdFileWriter() {
  if (file_) std::fclose(file_);
  if (!finished_) {
    std::error_code ec;
    fs::remove(tmp_, ec);
  }
  ZSTD_freeCCtx(cctx_of(cctx_));
}

void ZstdFileWriter::emit(std::string_view compressed) {
  if (compressed.empty()) return;
  if (std::fwrite(compressed.data(), 1, compressed.size(), file_) != compressed.size()) io_failure("cannot write", tmp_);
  sha_.update(compressed);
  result_.compressed_bytes += compressed.size();
}

void ZstdFileWriter::write(std::string_view bytes) {
  result_.raw_bytes += bytes.size();
  std::vector<char> out(ZSTD_CStreamOutSize());
  ZSTD_inBuffer in{bytes.data(), bytes.size(), 0};
  while (in.pos < in.size) {
    ZSTD_outBuffer ob{out.data(), out.size(), 0};
    std::size_t rc = ZSTD_compressStream2(cctx_of(cctx_), &ob, &in, ZSTD_e_continue);
    if (ZSTD_isError(rc)) throw internal_error(std::string("zstd: ") + ZSTD_getErrorName(rc));
    emit({out.data(), ob.pos});
  }
}

WrittenFile ZstdFileWriter::finish() {
  std::vector<char> out(ZSTD_CStreamOutSize());
  ZSTD_inBuffer in{nullptr, 0, 0};
  for (;;) {
    ZSTD_outBuffer ob{out.data(), out.size(), 0};
    std::size_t left = ZSTD_compressStream2(cctx_of(cctx_), &ob, &in, ZSTD_e_end);
    if (ZSTD_isError(left)) throw internal_error(std::string("zstd: ") + ZSTD_getErrorName(left));
    emit({out.data(), ob.pos});
    if (left == 0) break;
  }
  if (std::fflush(file_) != 0 || ::fsync(fileno(file_)) != 0) io_failure("cannot sync", tmp_);
  if (std::fclose(file_) != 0) {
    file_ = nullptr;
    io_failure("cannot close", tmp_);
  }
  file_ = nullptr;
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) io_failure("cannot rename into place", path_);
  fsync_dir(path_.parent_path());
  finished_ = true;
  result_.sha256 = sha_.hex_digest();
  return result_;
}

void read_zstd_file(const fs::path& path, const std::string& expected_sha256,
                    const std::function<void(std::string_view)>& sink) {
  // Only a regular file: a FIFO or a device put in the run directory would hang the restore or
  // never end. (Streamed, so no size limit.)
  InputFd fd = open_input_file(path, {"archive file", std::numeric_limits<std::uintmax_t>::max(), ErrorKind::data,
                                      "the run directory holds the files `shardctl archive run` wrote"});
  std::FILE* f = ::fdopen(fd.get(), "rb");
  if (!f) throw data_error("cannot read archive file " + path.string() + ": " + std::strerror(errno));
  fd.release();
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> guard(f, std::fclose);
  std::unique_ptr<ZSTD_DCtx, std::size_t (*)(ZSTD_DCtx*)> dctx(ZSTD_createDCtx(), ZSTD_freeDCtx);
  digest::Sha256 sha;
  std::vector<char> in_buf(ZSTD_DStreamInSize()), out_buf(ZSTD_DStreamOutSize());
  std::size_t last = 1;  // 0 once a frame ended exactly
  for (;;) {
    std::size_t n = std::fread(in_buf.data(), 1, in_buf.size(), f);
    if (n == 0) break;
    sha.update({in_buf.data(), n});
    ZSTD_inBuffer in{in_buf.data(), n, 0};
    while (in.pos < in.size) {
      ZSTD_outBuffer out{out_buf.data(), out_buf.size(), 0};
      last = ZSTD_decompressStream(dctx.get(), &out, &in);
      if (ZSTD_isError(last))
        throw data_error("archive file " + path.string() + " is damaged: " + ZSTD_getErrorName(last));
      sink({out_buf.data(), out.pos});
    }
  }
  if (std::ferror(f)) throw data_error("cannot read archive file " + path.string());
  if (last != 0) throw data_error("archive file " + path.string() + " is truncated");
  if (sha.hex_digest() != expected_sha256)
    throw data_error("archive file " + path.string() + " does not match the SHA-256 in the manifest",
                     "the file was changed or damaged after it was written");
}

void write_file_atomically(const fs::path& path, std::string_view text) {
  fs::path tmp = path.string() + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) io_failure("cannot create", tmp);
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size() && std::fflush(f) == 0 && ::fsync(fileno(f)) == 0;
  ok = (std::fclose(f) == 0) && ok;
  if (!ok) io_failure("cannot write", tmp);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) io_failure("cannot rename into place", path);
  fsync_dir(path.parent_path().empty() ? fs::path(".") : path.parent_path());
}

}  // namespace shardctl::archive
