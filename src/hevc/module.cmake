# HEVC decoder front end. The in-loop filters come from the hevc_filter module when the build
# selects it (SIGPU_MODULES empty or naming it); without it the decoder outputs the unfiltered
# reconstruction and says so.
if(NOT SIGPU_MODULES OR "hevc_filter" IN_LIST SIGPU_MODULES)
  target_compile_definitions(sigpu PRIVATE SIGPU_HEVC_FILTERS=1)
endif()
