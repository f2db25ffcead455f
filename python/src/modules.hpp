// One binding function per library module, each in <module>.cpp.
#pragma once

#include <pybind11/pybind11.h>

namespace sigpu::python {

void init_flac(pybind11::module_& m);
void init_turbo(pybind11::module_& m);
void init_audio(pybind11::module_& m);
void init_nam(pybind11::module_& m);
void init_prores(pybind11::module_& m);
void init_hevc(pybind11::module_& m);

}  // namespace sigpu::python
