# How the library takes on a dependency. Sources compile once, into the OBJECT library `sigpu`;
# libsigpu.so and libsigpu.a are both made from its objects (sigpu_library.cmake). What a module
# links goes to `sigpu` and, through these helpers, is also written down for the installed
# package: sigpuConfig.cmake finds it again for sigpu::sigpu_static and sigpu.pc lists it in
# Libs.private. The shared library carries its dependencies itself.
#
#   sigpu_link_package(<PUBLIC|PRIVATE> <imported target> PACKAGE <find_package args> PC <flags>)
#     a target from find_package(<args>); PC: its flags for sigpu.pc.
#   sigpu_link_pkgconfig(<PUBLIC|PRIVATE> <prefix> [REQUIRED] <module>...)
#     pkg_check_modules(<prefix> IMPORTED_TARGET <module>...), linked when found; leaves
#     <prefix>_FOUND and the other pkg_check_modules results to the caller (hence a macro).
#
# Header-only dependencies (nlohmann-json) and links for the CLI, tests or benches need neither:
# link them with target_link_libraries as usual.

function(_sigpu_record_dependency target find_line pc_flags)
  set_property(GLOBAL APPEND PROPERTY SIGPU_STATIC_INTERFACE ${target})
  set_property(GLOBAL APPEND PROPERTY SIGPU_CONFIG_FINDS "${find_line}")
  set_property(GLOBAL APPEND PROPERTY SIGPU_PC_LIBS_PRIVATE ${pc_flags})
endfunction()

function(sigpu_link_package scope target)
  cmake_parse_arguments(PARSE_ARGV 2 arg "" "" "PACKAGE;PC")
  target_link_libraries(sigpu ${scope} ${target})
  string(JOIN " " package ${arg_PACKAGE})
  _sigpu_record_dependency(${target} "_sigpu_find_package(${package})" "${arg_PC}")
endfunction()

macro(sigpu_link_pkgconfig scope prefix)
  pkg_check_modules(${prefix} IMPORTED_TARGET ${ARGN})
  if(${prefix}_FOUND)
    target_link_libraries(sigpu ${scope} PkgConfig::${prefix})
    set(_sigpu_modules ${ARGN})
    list(REMOVE_ITEM _sigpu_modules REQUIRED)
    string(JOIN " " _sigpu_modules ${_sigpu_modules})
    _sigpu_record_dependency(PkgConfig::${prefix} "_sigpu_find_pkgconfig(${prefix} ${_sigpu_modules})"
                             "${${prefix}_LDFLAGS}")
  endif()
endmacro()
