// sigpu: `sigpu <module> <verb> ...`. Parsing is CLI11's; every failure ends up here as an
// exit code: 0 ok, 1 damaged or failed input, 2 usage.
#include <algorithm>
#include <exception>
#include <iostream>
#include <utility>
#include <vector>

#include "commands.hpp"

namespace sigpu::cli {

void print_error(std::string_view message) {
  std::cerr << "sigpu: " << message << "\n";
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
  try {
    return action ? action() : kExitUsage;
  } catch (const UsageError& e) {
    print_error(e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    print_error(e.what());
    return kExitFailed;
  }
}
