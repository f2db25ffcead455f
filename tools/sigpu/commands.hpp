// The subcommands of the `sigpu` tool, and the conventions they share: exit codes, how errors
// are printed, the options every command that writes files takes.
#pragma once

#include <exception>
#include <functional>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>
#include <sigpu/core.hpp>

namespace sigpu::cli {

/// One table for every command (docs/cli.md). With several inputs a run exits with the highest
/// code any of them had.
enum ExitCode : int {
  kExitOk = 0,
  kExitDamaged = 1,      ///< damage reported (output written, damaged units silenced or marked)
  kExitUsage = 2,        ///< bad options, unknown format, output exists or is an input
  kExitInput = 3,        ///< input unreadable or not of the format; nothing decoded
  kExitUnsupported = 4,  ///< a feature this build or decoder does not support
  kExitOutput = 5,       ///< output cannot be written
};

/// The exit code an exception stands for (its sigpu::Error class).
int exit_code_of(const std::exception& e);

/// Prints "sigpu: <message>" on stderr.
void print_error(std::string_view message);

/// Prints the exception's message, prefixed by `context` unless the message already names it,
/// and returns its exit code.
int report_error(const std::exception& e, const std::string& context = {});

/// Rethrows the exception being handled with "<context>: " in front of its message, as the same
/// sigpu::Error class (so the exit code stays), unless the message names the context already.
[[noreturn]] void rethrow_naming(const std::string& context);

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

/// The options of a command that writes one output: -o/--output, --format, -f/--force.
struct OutputArgs {
  std::string output, format;
  bool force = false;
};
void add_output_options(CLI::App* cmd, OutputArgs& a, const std::string& formats,
                        const std::string& default_output);

/// Where a command with one input writes: -o's file or stdout, a file named after the input
/// in -o's folder, or without -o the input's name beside it; the last two with `extension`.
std::string output_path(const std::string& input, const OutputArgs& a, std::string_view extension);

}  // namespace sigpu::cli
