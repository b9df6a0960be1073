//===- FileWriteTest.cpp - a disk that fills up mid-write -----------------===//
//
// Issue 15's full disk without a tmpfs: a file-size limit (RLIMIT_FSIZE)
// makes write(2) fail part-way with EFBIG, as a full disk fails it with
// ENOSPC, so these run wherever the tests run (full-disk.test needs
// unprivileged mount namespaces, which some CI machines lack).
//
//===----------------------------------------------------------------------===//

#include "runtime/io/FileWrite.h"
#include "runtime/io/FileRead.h"

#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <sys/resource.h>

namespace dpc::io {
namespace {

/// Files of at most `bytes` while alive; SIGXFSZ ignored so that the write
/// fails with EFBIG instead of killing the process.
class FileSizeLimit {
public:
  explicit FileSizeLimit(rlim_t bytes) {
    getrlimit(RLIMIT_FSIZE, &saved);
    rlimit limit = saved;
    limit.rlim_cur = bytes;
    EXPECT_EQ(setrlimit(RLIMIT_FSIZE, &limit), 0);
    savedHandler = std::signal(SIGXFSZ, SIG_IGN);
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &saved);
    std::signal(SIGXFSZ, savedHandler);
  }

private:
  rlimit saved;
  void (*savedHandler)(int);
};

class FileWriteTest : public testing::Test {
protected:
  void SetUp() override {
    dir = testing::TempDir() + "/file_write_test";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  void TearDown() override { std::filesystem::remove_all(dir); }

  std::string read(const std::string &path) {
    std::vector<uint8_t> bytes;
    std::string error;
    EXPECT_TRUE(readFile(path, bytes, error)) << error;
    return std::string(bytes.begin(), bytes.end());
  }

  std::string dir;
};

TEST_F(FileWriteTest, AFailedAtomicWriteKeepsTheOldFileAndRemovesItsTemporary) {
  std::string path = dir + "/checkpoint.dpcckpt";
  std::string error;
  ASSERT_TRUE(writeFileAtomically(path, std::string("old"), error)) << error;
  std::string big(64 * 1024, 'x');
  {
    FileSizeLimit limit(4096);
    EXPECT_FALSE(writeFileAtomically(path, big, error));
  }
  EXPECT_EQ(error, path + ": cannot write the file (File too large)");
  EXPECT_EQ(read(path), "old");
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  // The same write succeeds once there is room.
  ASSERT_TRUE(writeFileAtomically(path, big, error)) << error;
  EXPECT_EQ(read(path), big);
}

TEST_F(FileWriteTest, AnAppendThatDoesNotFitFailsWhereItHappens) {
  std::string path = dir + "/metrics.jsonl";
  std::string error;
  AppendFile file;
  ASSERT_TRUE(file.open(path, error)) << error;
  std::string line(1000, 'm');
  line += '\n';
  FileSizeLimit limit(4096);
  int appended = 0;
  while (file.append(line, error))
    ++appended;
  EXPECT_EQ(appended, 4);
  EXPECT_EQ(error, path + ": cannot write the file (File too large)");
}

TEST_F(FileWriteTest, DevicesAreWrittenInPlaceAndTheirErrorsSeen) {
  std::string error;
  EXPECT_FALSE(writeFileAtomically("/dev/full", std::string("x"), error));
  EXPECT_EQ(error, "/dev/full: cannot write the file (No space left on "
                   "device)");
  EXPECT_TRUE(std::filesystem::is_character_file("/dev/full"));
  AppendFile file;
  ASSERT_TRUE(file.open("/dev/full", error)) << error;
  EXPECT_FALSE(file.append("x", error));
  EXPECT_EQ(error, "/dev/full: cannot write the file (No space left on "
                   "device)");
}

TEST_F(FileWriteTest, ADirectoryIsNoFile) {
  std::string error;
  EXPECT_FALSE(writeFileAtomically(dir, std::string("x"), error));
  EXPECT_EQ(error, dir + ": cannot write the file (Is a directory)");
  std::string missing = dir + "/no/such/dir/plan";
  EXPECT_FALSE(writeFileAtomically(missing, std::string("x"), error));
  EXPECT_EQ(error,
            missing + ": cannot write the file (No such file or directory)");
}

} // namespace
} // namespace dpc::io
