// sigpu: `sigpu <module> <verb> ...`. Parsing is CLI11's; every failure ends up here as an exit
// code from the one table in commands.hpp.
#include <algorithm>
#include <exception>
#include <filesystem>
#include <iostream>
#include <utility>
#include <vector>

#include <sigpu/io.hpp>

#include "commands.hpp"

namespace sigpu::cli {

void print_error(std::string_view message) {
  std::cerr << "sigpu: " << message << "\n";
}

int exit_code_of(const std::exception& e) {
  if (dynamic_cast<const UsageError*>(&e)) return kExitUsage;
  if (dynamic_cast<const InputError*>(&e)) return kExitInput;
  if (dynamic_cast<const UnsupportedError*>(&e)) return kExitUnsupported;
  if (dynamic_cast<const OutputError*>(&e)) return kExitOutput;
  return kExitDamaged;
}

int report_error(const std::exception& e, const std::string& context) {
  const std::string message = e.what();
  if (context.empty() || message.find(context) != std::string::npos)
    print_error(message);
  else
    print_error(context + ": " + message);
  return exit_code_of(e);
}

void rethrow_naming(const std::string& context) {
  try {
    throw;
  } catch (const std::exception& e) {
    const std::string m = e.what();
    if (m.find(context) != std::string::npos) throw;
    const std::string named = context + ": " + m;
    if (dynamic_cast<const UsageError*>(&e)) throw UsageError(named);
    if (dynamic_cast<const InputError*>(&e)) throw InputError(named);
    if (dynamic_cast<const UnsupportedError*>(&e)) throw UnsupportedError(named);
    if (dynamic_cast<const OutputError*>(&e)) throw OutputError(named);
    throw Error(named);
  }
}

void add_output_options(CLI::App* cmd, OutputArgs& a, const std::string& formats,
                        const std::string& default_output) {
  cmd->add_option("-o,--output", a.output,
                  "Output file, or - for stdout; default: " + default_output);
  cmd->add_option("--format", a.format,
                  formats + " (default: from the output's extension; stdout: the first)");
  cmd->add_flag("-f,--force", a.force, "Overwrite an existing output file");
}

std::string output_path(const std::string& input, const OutputArgs& a, std::string_view extension) {
  namespace fs = std::filesystem;
  if (a.output.empty()) return io::default_output(input, extension);
  if (a.output == "-" || !fs::is_directory(a.output)) return a.output;
  if (input == "-") throw UsageError("reading stdin, name the output file, not a folder");
  return (fs::path(a.output) / fs::path(input).filename().replace_extension(extension)).string();
}

namespace {
// A function-local static: registrations run during static initialisation, in any order.
std::vector<std::pair<int, AddCommands>>& registry() {
  static std::vector<std::pair<int, AddCommands>> r;
  return r;
}
}  // namespace

CommandRegistration::CommandRegistration(int order, AddCommands add) {
  registry().emplace_back(order, add);
}

void add_registered_commands(CLI::App& app, Action& action) {
  auto& r = registry();
  std::stable_sort(r.begin(), r.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [order, add] : r) add(app, action);
}

}  // namespace sigpu::cli

int main(int argc, char** argv) {
  using namespace sigpu::cli;
  CLI::App app{"sigpu: signal decoding on NVIDIA GPUs, with a multi-threaded CPU path", "sigpu"};
  app.set_version_flag("--version", std::string(sigpu::version()));
  app.require_subcommand(1);
  app.footer(
      "Exit codes: 0 ok; 1 damage reported (output written); 2 usage; 3 input unreadable or "
      "not of the format; 4 unsupported feature; 5 output cannot be written; 130 interrupted.");
  Action action;
  add_registered_commands(app, action);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    print_error(e.what());
    std::cerr << "Run 'sigpu --help' (or 'sigpu <command> --help') for usage.\n";
    return kExitUsage;
  }
  sigpu::io::install_interrupt_cleanup();
  try {
    return action ? action() : kExitUsage;
  } catch (const std::exception& e) {
    return report_error(e);
  }
}
