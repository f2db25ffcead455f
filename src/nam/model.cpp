// Model facts derived from the config, and the optional loudness normalisation.
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
  }
  return "?";
}

long Model::receptive_field() const {
  long rf = 0;
  switch (architecture) {
    case Architecture::wavenet:
      for (const LayerArray& a : wavenet.layer_arrays)
        for (int d : a.dilations) rf += static_cast<long>(a.kernel_size - 1) * d;
      return rf;
    case Architecture::convnet:
      for (int d : convnet.dilations) rf += d;
      return rf;
    case Architecture::linear:
      return linear.receptive_field - 1;
    case Architecture::lstm:
      return 0;
  }
  return 0;
}

long Model::prewarm_samples() const {
  switch (architecture) {
    case Architecture::wavenet:
    case Architecture::convnet:
      return 1 + receptive_field();
    case Architecture::lstm:
      return std::lround(0.5 * sample_rate);
    case Architecture::linear:
      return 0;
  }
  return 0;
}

bool Model::same_shape(const Model& o) const {
  if (architecture != o.architecture) return false;
  switch (architecture) {
    case Architecture::wavenet: {
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
  }
  return out;
}

}  // namespace sigpu::nam
