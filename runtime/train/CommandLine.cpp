//===- CommandLine.cpp - the flags of dpc's runtime commands --------------===//

#include "runtime/train/CommandLine.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace dpc::train {

void FlagParser::addValue(const std::string &name, Handler handle) {
  flags[name] = {std::move(handle), nullptr};
}

void FlagParser::addSwitch(const std::string &name, bool &target) {
  flags[name] = {nullptr, &target};
}

bool FlagParser::parse(const std::vector<std::string> &args,
                       std::string &planPath) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &arg = args[i];
    if (arg == "-h" || arg == "--help")
      return false;
    if (arg.rfind("-", 0) != 0 || arg == "-") {
      if (!planPath.empty())
        throw UsageError("unexpected argument '" + arg +
                         "' (the plan is already '" + planPath + "')");
      planPath = arg;
      continue;
    }
    std::string name = arg, value;
    bool inlineValue = false;
    if (size_t eq = arg.find('='); eq != std::string::npos)
      name = arg.substr(0, eq), value = arg.substr(eq + 1), inlineValue = true;
    auto flag = flags.find(name);
    if (flag == flags.end())
      throw UsageError("unknown flag '" + name + "'");
    seen[name] = true;
    if (flag->second.target) {
      if (inlineValue)
        throw UsageError(name + " takes no value");
      *flag->second.target = true;
      continue;
    }
    if (!inlineValue) {
      if (i + 1 >= args.size())
        throw UsageError(name + " needs a value");
      value = args[++i];
    }
    if (value.empty())
      throw UsageError(name + " needs a non-empty value");
    flag->second.handle(value);
  }
  return true;
}

int64_t parseCount(const std::string &flag, const std::string &value,
                   int64_t min) {
  char *end = nullptr;
  errno = 0;
  long long parsed = std::strtoll(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || errno == ERANGE || parsed < min)
    throw UsageError(flag + ": expected a whole number >= " +
                     std::to_string(min) + ", got '" + value + "'");
  return parsed;
}

double parsePositive(const std::string &flag, const std::string &value) {
  char *end = nullptr;
  double parsed = std::strtod(value.c_str(), &end);
  if (value.empty() || *end != '\0' || !std::isfinite(parsed) || parsed <= 0)
    throw UsageError(flag + ": expected a positive number, got '" + value +
                     "'");
  return parsed;
}

std::vector<std::string> splitCommas(const std::string &text) {
  std::vector<std::string> parts(1);
  for (char c : text) {
    if (c == ',')
      parts.emplace_back();
    else
      parts.back() += c;
  }
  return parts;
}

} // namespace dpc::train
