// Many files by path: read in batches of about a fixed number of bytes, so that memory holds
// one batch, each batch decoded together (on the GPU: packed into shared launches).
#include <vector>

#include <sigpu/flac.hpp>
#include <sigpu/io.hpp>

namespace sigpu::flac {

void decode_files(std::span<const std::string> paths, const DecodeOptions& options,
                  const FileSink& on_file, std::uint64_t batch_bytes) {
  if (batch_bytes == 0) batch_bytes = kDefaultBatchBytes;
  const Backend backend = resolve(options.backend);
  DecodeOptions o = options;
  o.backend = backend;

  for (std::size_t first = 0; first < paths.size();) {
    std::vector<std::size_t> batch;
    std::vector<io::Input> opened;
    std::vector<std::span<const std::uint8_t>> spans;
    std::uint64_t used = 0;
    std::size_t n = first;
    for (; n < paths.size() && (batch.empty() || used < batch_bytes); ++n) {
      try {
        opened.emplace_back(paths[n]);
        spans.push_back(opened.back().all(batch_bytes));
        used += spans.back().size();
        batch.push_back(n);
      } catch (const std::exception& e) {
        BatchResult failed;
        failed.error = e.what();
        on_file(n, failed);
      }
    }
    first = n;
    if (batch.empty()) continue;
    std::vector<BatchResult> results;
    try {
      results = decode_batch(spans, o);
    } catch (const std::exception& e) {
      results.assign(batch.size(), BatchResult{});
      for (auto& r : results) r.error = e.what();
    }
    for (std::size_t k = 0; k < batch.size(); ++k) on_file(batch[k], results[k]);
  }
}

}  // namespace sigpu::flac
