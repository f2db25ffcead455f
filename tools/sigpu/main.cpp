// sigpu: `sigpu <module> <verb> ...`. Parsing is CLI11's; every failure ends up here as an
// exit code: 0 ok, 1 damaged or failed input, 2 usage.
#include <exception>
#include <iostream>

#include "commands.hpp"

namespace sigpu::cli {

void print_error(std::string_view message) {
  std::cerr << "sigpu: " << message << "\n";
}

}  // namespace sigpu::cli

int main(int argc, char** argv) {
  using namespace sigpu::cli;
  CLI::App app{"sigpu: signal decoding on NVIDIA GPUs, with a multi-threaded CPU path", "sigpu"};
  app.set_version_flag("--version", std::string(sigpu::version()));
  app.require_subcommand(1);
  Action action;
  add_info_command(app, action);
  add_flac_commands(app, action);
  add_demo_command(app, action);
  add_turbo_commands(app, action);

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
