//===- CommandLine.h - the flags of dpc's runtime commands ------*- C++ -*-===//
//
// One parser for `dpc run`, `eval`, `predict` and `export`: a command
// declares each flag once, with the code that parses its value, and the
// parser does the rest alike for all of them (`--flag value` or
// `--flag=value`, the plan as the one positional argument, -h/--help, and
// one-line UsageErrors for unknown flags and missing values).
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_TRAIN_COMMANDLINE_H
#define DPC_RUNTIME_TRAIN_COMMANDLINE_H

#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace dpc::train {

/// A bad command line; the message is one line.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class FlagParser {
public:
  /// Parses a flag's value, throwing UsageError.
  using Handler = std::function<void(const std::string &value)>;

  /// A flag that takes a value (refused when empty).
  void addValue(const std::string &name, Handler handle);
  /// A flag that takes none.
  void addSwitch(const std::string &name, bool &target);

  /// Parses `args` into the declared flags and the plan path. Returns false
  /// when they ask for help (-h, --help), which stops parsing.
  bool parse(const std::vector<std::string> &args, std::string &planPath);

  /// Whether `name` appeared on the command line.
  bool given(const std::string &name) const { return seen.count(name) != 0; }

private:
  struct Flag {
    Handler handle; // flags with a value
    bool *target;   // switches
  };
  std::map<std::string, Flag> flags;
  std::map<std::string, bool> seen;
};

/// A whole number >= `min`, or a UsageError naming `flag`.
int64_t parseCount(const std::string &flag, const std::string &value,
                   int64_t min);
/// A finite number > 0, or a UsageError naming `flag`.
double parsePositive(const std::string &flag, const std::string &value);
/// `text` split at each comma ("a,,b": "a", "", "b").
std::vector<std::string> splitCommas(const std::string &text);

} // namespace dpc::train

#endif // DPC_RUNTIME_TRAIN_COMMANDLINE_H
