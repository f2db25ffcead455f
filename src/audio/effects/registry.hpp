// The one place effects are registered. An effect lives in its own folder: a header with its
// processing kind (its plan data and per-sample code, CPU and CUDA: batched.hpp for per-channel
// kinds) and a .cpp with its descriptor (descriptor.hpp) and host side (effect.hpp). Adding one
// is that folder, its kind in Kinds (when it brings a new one) and its descriptor in kEffects.
#pragma once

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include "audio/effects/compressor/compressor.hpp"
#include "audio/effects/convolution/convolution.hpp"
#include "audio/effects/delay/delay.hpp"
#include "audio/effects/descriptor.hpp"
#include "audio/effects/eq/eq.hpp"
#include "audio/effects/gate/gate.hpp"
#include "audio/effects/mix/mix.hpp"
#include "audio/effects/nam/nam.hpp"

namespace sigpu::audio {

template <typename... K>
struct KindList {
  static constexpr int size = sizeof...(K);
  using Data = std::tuple<typename K::Data...>;
  template <std::size_t I>
  using At = std::tuple_element_t<I, std::tuple<K...>>;
};

/// The processing kinds. The runners batch one kind at one level of the graph into one group;
/// within a level, groups run in this order.
using Kinds = KindList<effects::MixKind, effects::EqKind, effects::GateKind,
                       effects::CompressorKind, effects::DelayKind
#ifdef SIGPU_HAVE_AUDIO_CONVOLUTION
                       ,
                       effects::ConvolutionKind
#endif
#ifdef SIGPU_HAVE_AUDIO_NAM
                       ,
                       effects::NamKind
#endif
                       >;

namespace effects {
extern const EffectDescriptor kGain, kPan, kMixer, kRouter, kEq, kGate, kCompressor, kDelay;
#ifdef SIGPU_HAVE_AUDIO_CONVOLUTION
extern const EffectDescriptor kConvolution;
#endif
#ifdef SIGPU_HAVE_AUDIO_NAM
extern const EffectDescriptor kNam;
#endif
}  // namespace effects

/// The effect types by their graph-file names, in the order docs list them.
inline constexpr const EffectDescriptor* kEffects[] = {
    &effects::kGain,        &effects::kPan,  &effects::kMixer,      &effects::kRouter,
    &effects::kEq,          &effects::kGate, &effects::kCompressor, &effects::kDelay,
#ifdef SIGPU_HAVE_AUDIO_CONVOLUTION
    &effects::kConvolution,
#endif
#ifdef SIGPU_HAVE_AUDIO_NAM
    &effects::kNam,
#endif
};

/// A kind's number: its place in Kinds.
using Kind = int;
inline constexpr int kKinds = Kinds::size;

template <typename K, std::size_t I = 0>
constexpr Kind kind_of() {
  static_assert(I < Kinds::size, "not a kind in Kinds");
  if constexpr (std::is_same_v<K, typename Kinds::template At<I>>) {
    return static_cast<Kind>(I);
  } else {
    return kind_of<K, I + 1>();
  }
}

/// f(std::integral_constant<std::size_t, I>) for every kind, in order.
template <typename F>
void for_each_kind(F&& f) {
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (f(std::integral_constant<std::size_t, I>{}), ...);
  }
  (std::make_index_sequence<Kinds::size>{});
}

/// f(std::integral_constant<std::size_t, I>) for the kind numbered k.
template <typename F>
void with_kind(Kind k, F&& f) {
  for_each_kind([&](auto i) {
    if (static_cast<Kind>(decltype(i)::value) == k) f(i);
  });
}

}  // namespace sigpu::audio
