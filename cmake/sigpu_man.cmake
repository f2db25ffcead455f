# share/man/man1/sigpu.1, written at build time by help2man from `sigpu --help`, `--version` and
# every subcommand's --help (cmake/sigpu-man-page finds them), so the page follows the CLI.
find_program(SIGPU_HELP2MAN help2man)
if(NOT SIGPU_HELP2MAN)
  message(STATUS "sigpu: help2man not found, no man page (Debian package help2man)")
  return()
endif()
set(SIGPU_MAN_PAGE ${PROJECT_BINARY_DIR}/man/sigpu.1)
add_custom_command(OUTPUT ${SIGPU_MAN_PAGE}
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/sigpu-man-page $<TARGET_FILE:sigpu_cli> ${SIGPU_HELP2MAN}
          ${SIGPU_MAN_PAGE}
  DEPENDS sigpu_cli ${CMAKE_CURRENT_LIST_DIR}/sigpu-man-page
  COMMENT "help2man: man/sigpu.1" VERBATIM)
add_custom_target(sigpu_man ALL DEPENDS ${SIGPU_MAN_PAGE})
install(FILES ${SIGPU_MAN_PAGE} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
