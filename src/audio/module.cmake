# The audio module: effects in src/audio/effects/, one folder each (the root glob sees one level
# only), libsndfile for the renderer, nlohmann-json for graph files.
file(GLOB_RECURSE SIGPU_AUDIO_EFFECTS CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/effects/*.cpp)
target_sources(sigpu PRIVATE ${SIGPU_AUDIO_EFFECTS})

find_package(nlohmann_json 3 REQUIRED)
target_link_libraries(sigpu PRIVATE nlohmann_json::nlohmann_json)

sigpu_link_pkgconfig(PUBLIC SIGPU_AUDIO_SNDFILE sndfile)
if(SIGPU_AUDIO_SNDFILE_FOUND)
  target_compile_definitions(sigpu PRIVATE SIGPU_HAVE_SNDFILE=1)
endif()

# The JACK client (`sigpu audio run`).
sigpu_link_pkgconfig(PUBLIC SIGPU_AUDIO_JACK jack)
if(SIGPU_AUDIO_JACK_FOUND)
  target_compile_definitions(sigpu PUBLIC SIGPU_HAVE_JACK=1)
endif()

# The convolution effect wraps the convolution module when this build has it.
if(EXISTS ${PROJECT_SOURCE_DIR}/src/convolution/module.cmake AND
   (NOT SIGPU_MODULES OR "convolution" IN_LIST SIGPU_MODULE_LIST))
  target_compile_definitions(sigpu PUBLIC SIGPU_HAVE_AUDIO_CONVOLUTION=1)
endif()

# The nam effect wraps the nam module when this build has it.
if(EXISTS ${PROJECT_SOURCE_DIR}/src/nam/module.cmake AND
   (NOT SIGPU_MODULES OR "nam" IN_LIST SIGPU_MODULE_LIST))
  target_compile_definitions(sigpu PUBLIC SIGPU_HAVE_AUDIO_NAM=1)
endif()

if(SIGPU_HAVE_CUDA)
  # CPU and CUDA effects share their per-sample code (effects/*/, compiled into the runner);
  # without FMA contraction the GPU rounds like the host and the twins agree far below -100 dBFS.
  file(GLOB SIGPU_AUDIO_CU CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/cuda/*.cu)
  set_source_files_properties(${SIGPU_AUDIO_CU} PROPERTIES COMPILE_OPTIONS "-fmad=false")
endif()

# `sigpu audio serve` (the control surface): Boost.Beast, header-only (libboost-dev); only
# serve.cpp sees it.
find_package(Boost 1.70 QUIET)
if(Boost_FOUND AND EXISTS ${Boost_INCLUDE_DIRS}/boost/beast.hpp)
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/serve.cpp PROPERTIES
    COMPILE_DEFINITIONS "SIGPU_HAVE_AUDIO_SERVE=1;BOOST_ASIO_NO_DEPRECATED;BOOST_BEAST_USE_STD_STRING_VIEW")
  if(NOT Boost_INCLUDE_DIRS STREQUAL "/usr/include")
    set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/serve.cpp PROPERTIES
      INCLUDE_DIRECTORIES ${Boost_INCLUDE_DIRS})
  endif()
else()
  message(STATUS "sigpu: Boost.Beast not found (libboost-dev): `sigpu audio serve` refuses")
endif()
