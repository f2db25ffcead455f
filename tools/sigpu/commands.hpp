// The subcommands of the `sigpu` tool, and the conventions they share: exit codes and how
// errors are printed.
#pragma once

#include <functional>
#include <string_view>

#include <CLI/CLI.hpp>
#include <sigpu/core.hpp>

namespace sigpu::cli {

enum ExitCode : int {
  kExitOk = 0,
  kExitFailed = 1,  ///< a file was damaged, failed its MD5 check or could not be processed
  kExitUsage = 2,
};

/// A usage mistake only visible after parsing, e.g. several inputs but no output directory.
class UsageError : public Error {
 public:
  using Error::Error;
};

/// What main runs once the command line parsed; the chosen subcommand's callback sets it.
using Action = std::function<int()>;

using AddCommands = void (*)(CLI::App& app, Action& action);

/// Each cmd_<module>.cpp registers its subcommands with a static CommandRegistration, so a build
/// of some modules only (CMake's SIGPU_MODULES) links the commands it has and main.cpp names
/// none of them. `order` sets their place in `sigpu --help`.
struct CommandRegistration {
  CommandRegistration(int order, AddCommands add);
};

/// Adds every registered command to app, in order.
void add_registered_commands(CLI::App& app, Action& action);

/// Prints "sigpu: <message>" on stderr.
void print_error(std::string_view message);

}  // namespace sigpu::cli
