// Model facts derived from the config, and the optional loudness normalisation.
#include <algorithm>
#include <cmath>

#include "nam/layout.hpp"

namespace sigpu::nam {

std::string_view to_string(Architecture a) {
  switch (a) {
    case Architecture::wavenet:
      return "WaveNet";
    case Architecture::lstm:
      return "LSTM";
    case Architecture::convnet:
      return "ConvNet";
    case Architecture::linear:
      return "Linear";
    case Architecture::slimmable_container:
      return "SlimmableContainer";
  }
  return "?";
}

std::string_view to_string(Activation a) {
  switch (a) {
    case Activation::tanh:
      return "Tanh";
    case Activation::hardtanh:
      return "Hardtanh";
    case Activation::relu:
      return "ReLU";
    case Activation::leaky_relu:
      return "LeakyReLU";
    case Activation::sigmoid:
      return "Sigmoid";
    case Activation::silu:
      return "SiLU";
    case Activation::hardswish:
      return "Hardswish";
    case Activation::fast_tanh:
      return "Fasttanh";
    case Activation::prelu:
      return "PReLU";
    case Activation::leaky_hardtanh:
      return "LeakyHardtanh";
    case Activation::softsign:
      return "Softsign";
  }
  return "?";
}

long Model::receptive_field() const {
  long rf = 0;
  switch (architecture) {
    case Architecture::wavenet:
      for (const LayerArray& a : wavenet.layer_arrays) {
        for (std::size_t i = 0; i < a.dilations.size(); ++i)
          rf += static_cast<long>(a.kernel_sizes[i] - 1) * a.dilations[i];
        rf += static_cast<long>(a.head_kernel_size - 1) * a.head_dilation;
      }
      if (wavenet.condition_dsp) rf += wavenet.condition_dsp->receptive_field();
      return rf;
    case Architecture::convnet:
      for (int d : convnet.dilations) rf += d;
      return rf;
    case Architecture::linear:
      return linear.receptive_field - 1;
    case Architecture::lstm:
      return 0;
    case Architecture::slimmable_container:
      for (const SizedModel& s : sizes) rf = std::max(rf, s.model->receptive_field());
      return rf;
  }
  return 0;
}

long Model::prewarm_samples() const {
  switch (architecture) {
    case Architecture::wavenet:
      // NAM core: the condition_dsp's pre-warm (else 1) plus every array's receptive field.
      return (wavenet.condition_dsp ? wavenet.condition_dsp->prewarm_samples() -
                                          wavenet.condition_dsp->receptive_field()
                                    : 1) +
             receptive_field();
    case Architecture::convnet:
      return 1 + receptive_field();
    case Architecture::lstm:
      return std::lround(0.5 * sample_rate);
    case Architecture::linear:
      return 0;
    case Architecture::slimmable_container: {
      long p = 0;
      for (const SizedModel& s : sizes) p = std::max(p, s.model->prewarm_samples());
      return p;
    }
  }
  return 0;
}

int Model::size_index(double size) const {
  if (sizes.empty()) return 0;
  if (architecture == Architecture::slimmable_container) {
    for (std::size_t i = 0; i < sizes.size(); ++i)
      if (size < sizes[i].max_value) return static_cast<int>(i);
    return static_cast<int>(sizes.size()) - 1;
  }
  // No allocation: Processor::set_size calls this on the audio thread.
  const auto& arrays = wavenet.layer_arrays;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    bool same = true;
    for (std::size_t a = 0; a < arrays.size(); ++a)
      same = same && sizes[i].channels[a] == slim_channels_for_size(arrays[a], size);
    if (same) return static_cast<int>(i);
  }
  return static_cast<int>(sizes.size()) - 1;
}

bool Model::same_shape(const Model& o) const {
  if (architecture != o.architecture) return false;
  switch (architecture) {
    case Architecture::wavenet: {
      // Only A1-shaped WaveNets share launches (the engines that batch run no others).
      if (!a2_feature(wavenet).empty() || !a2_feature(o.wavenet).empty()) return false;
      const auto& a = wavenet.layer_arrays;
      const auto& b = o.wavenet.layer_arrays;
      if (a.size() != b.size()) return false;
      for (std::size_t i = 0; i < a.size(); ++i) {
        if (a[i].input_size != b[i].input_size || a[i].condition_size != b[i].condition_size ||
            a[i].head_size != b[i].head_size || a[i].channels != b[i].channels ||
            a[i].kernel_size != b[i].kernel_size || a[i].dilations != b[i].dilations ||
            a[i].activation != b[i].activation || a[i].gated != b[i].gated ||
            a[i].head_bias != b[i].head_bias)
          return false;
      }
      return true;
    }
    case Architecture::lstm:
      return lstm.num_layers == o.lstm.num_layers && lstm.input_size == o.lstm.input_size &&
             lstm.hidden_size == o.lstm.hidden_size;
    case Architecture::convnet:
      return convnet.channels == o.convnet.channels && convnet.dilations == o.convnet.dilations &&
             convnet.batchnorm == o.convnet.batchnorm && convnet.activation == o.convnet.activation;
    case Architecture::linear:
      return linear.receptive_field == o.linear.receptive_field && linear.bias == o.linear.bias;
    case Architecture::slimmable_container:
      return false;
  }
  return false;
}

Model normalized(const Model& m, double target_db) {
  if (!m.loudness_db)
    throw Error(m.source + ": metadata.loudness: missing, so the output cannot be normalised");
  const float gain = static_cast<float>(std::pow(10.0, (target_db - *m.loudness_db) / 20.0));
  Model out = m;
  auto scale = [&out, gain](long first, long count) {
    for (long i = first; i < first + count; ++i) out.weights[i] *= gain;
  };
  switch (m.architecture) {
    case Architecture::wavenet:
      scale(static_cast<long>(out.weights.size()) - 1, 1);
      out.wavenet.head_scale = out.weights.back();
      break;
    case Architecture::lstm: {
      const LstmLayout l = lstm_layout(m.lstm);
      scale(l.head_w, m.lstm.hidden_size + 1);
      break;
    }
    case Architecture::convnet: {
      const ConvNetLayout l = convnet_layout(m.convnet);
      scale(l.head_w, m.convnet.channels + 1);
      break;
    }
    case Architecture::linear:
      scale(0, static_cast<long>(out.weights.size()));
      break;
    case Architecture::slimmable_container:
      break;
  }
  for (SizedModel& s : out.sizes) {
    Model sub = *s.model;
    sub.loudness_db = m.loudness_db;
    s.model = std::make_shared<Model>(normalized(sub, target_db));
  }
  return out;
}

}  // namespace sigpu::nam
