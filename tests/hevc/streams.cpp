#include "hevc/streams.hpp"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <mutex>

#include "support/cache.hpp"

namespace sigpu::hevc::testing {
namespace fs = std::filesystem;

const std::vector<StreamSpec>& standard_streams() {
  static const std::vector<StreamSpec> s = [] {
    const std::string t64 = "testsrc2=size=64x64:rate=25", t128 = "testsrc2=size=128x96:rate=25";
    const std::string plain = "--no-deblock --no-sao ";
    std::vector<StreamSpec> v;
    v.push_back({"plain8_ctu16", t64, 2, 8, plain + "--ctu 16"});
    v.push_back({"plain8_ctu32_nowpp", t128, 2, 8, plain + "--ctu 32 --no-wpp"});
    v.push_back({"plain10_ctu64", t128, 2, 10, plain + "--ctu 64"});
    v.push_back({"filt8_ctu16", t64, 2, 8, "--ctu 16"});
    v.push_back({"filt8_ctu32", t128, 2, 8, "--ctu 32"});
    v.push_back({"filt10_ctu64", t128, 2, 10, "--ctu 64"});
    for (int qp : {0, 12, 37, 51})
      v.push_back({"qp" + std::to_string(qp), t64, 1, 8, "--ctu 16 --qp " + std::to_string(qp)});
    v.push_back({"qp51_10bit", t64, 1, 10, "--ctu 32 --qp 51"});
    v.push_back({"sao_only", t128, 2, 8, "--no-deblock --ctu 32"});
    v.push_back({"deblock_only", t128, 2, 10, "--no-sao --ctu 16"});
    v.push_back({"deblock_offsets", t128, 1, 8, "--ctu 16 --deblock -6:6 --qp 40"});
    v.push_back({"deblock_offsets2", t128, 1, 10, "--ctu 32 --deblock 5:-4 --qp 45"});
    v.push_back({"slices4", t128, 2, 8, "--ctu 16 --slices 4"});
    v.push_back({"slices3_10bit", t128, 1, 10, "--ctu 16 --slices 3 --qp 35"});
    v.push_back({"lossless", t64, 1, 8, "--lossless"});
    v.push_back({"cu_lossless", t128, 1, 8, "--cu-lossless --ctu 16"});
    v.push_back({"tskip8", t64, 2, 8, plain + "--tskip --ctu 16"});
    v.push_back({"tskip10", t128, 1, 10, "--tskip --ctu 32"});
    v.push_back({"scaling8", t64, 2, 8, "--scaling-list default --ctu 16"});
    v.push_back({"scaling10", t128, 1, 10, plain + "--scaling-list default --qp 20"});
    v.push_back({"chroma_qp_offsets", t128, 1, 8, "--cbqpoffs -4 --crqpoffs 6 --ctu 16"});
    v.push_back({"small_qg", t128, 1, 8, "--aq-mode 2 --qg-size 8 --ctu 32"});
    v.push_back({"tu_depth", t128, 1, 8, "--tu-intra-depth 3 --max-tu-size 16 --ctu 32"});
    v.push_back({"no_sdh_no_smoothing", t64, 1, 8, "--no-signhide --no-strong-intra-smoothing"});
    v.push_back({"odd_208x120", "testsrc2=size=208x120:rate=25", 1, 8, "--ctu 64"});
    v.push_back({"odd_1000x562", "testsrc2=size=1000x562:rate=25", 1, 10, "--ctu 64 --qp 30"});
    v.push_back({"noise10_qp4", t64, 1, 10, "--ctu 16 --qp 4", "noise=alls=80:allf=t"});
    v.push_back({"noise8_qp1", t64, 1, 8, plain + "--qp 1", "noise=alls=100:allf=t"});
    v.push_back({"hash_checksum", t64, 2, 8, "--ctu 16 --hash 3"});
    v.push_back({"main12", t64, 2, 12, "--ctu 16"});
    v.push_back({"mono8", t64, 2, 8, "--input-csp i400 --ctu 16", "", true});
    v.push_back({"mono10_nofilt", t64, 1, 10, plain + "--input-csp i400 --ctu 32", "", true});
    return v;
  }();
  return s;
}

const std::vector<StreamSpec>& inter_streams() {
  static const std::vector<StreamSpec> s = [] {
    const std::string t = "testsrc2=size=208x120:rate=25", m = "mandelbrot=size=208x120:rate=25";
    const std::string fast = "--keyint 250 --preset fast ";
    std::vector<StreamSpec> v;
    v.push_back({"p_ultrafast", t, 16, 8, "--keyint 250 --preset ultrafast --bframes 0"});
    v.push_back({"medium8", t, 20, 8, "--keyint 250 --preset medium"});
    v.push_back({"medium10", m, 16, 10, "--keyint 250 --preset medium"});
    v.push_back({"mandel_352x288", "mandelbrot=size=352x288:rate=25", 10, 8,
                 "--keyint 250 --preset medium"});
    v.push_back({"b3_pyramid", t, 20, 8, fast + "--bframes 3 --b-pyramid"});
    v.push_back({"b8_pyramid", t, 30, 8, fast + "--bframes 8 --b-pyramid --b-adapt 0"});
    v.push_back({"b4_no_pyramid", m, 16, 10, fast + "--bframes 4 --no-b-pyramid"});
    v.push_back({"weighted8", t, 20, 8, fast + "--weightp --weightb --bframes 3", "fade=in:0:20"});
    v.push_back(
        {"weighted10", m, 20, 10, fast + "--weightp --weightb --bframes 3", "fade=out:0:20"});
    v.push_back({"ref4", t, 20, 8, fast + "--ref 4 --bframes 3"});
    v.push_back({"amp_rect", t, 16, 8, fast + "--rect --amp --bframes 3", "noise=alls=30:allf=t"});
    v.push_back({"no_tmvp", t, 16, 8, fast + "--no-temporal-mvp --bframes 3"});
    v.push_back({"merge1", t, 16, 8, fast + "--max-merge 1 --bframes 3"});
    v.push_back({"merge5", m, 16, 8, fast + "--max-merge 5 --bframes 3"});
    v.push_back({"open_gop", t, 30, 8,
                 fast + "--open-gop --keyint 12 --min-keyint 12 --bframes 4 --repeat-headers"});
    v.push_back({"ctu16_slices", t, 16, 8, fast + "--ctu 16 --slices 3 --bframes 3"});
    v.push_back({"tu_depth_ctu32", t, 16, 10,
                 fast + "--ctu 32 --tu-inter-depth 3 --max-tu-size 8 --bframes 2"});
    v.push_back({"lossless_tskip_scaling", t, 10, 8,
                 fast + "--cu-lossless --tskip --scaling-list default --bframes 2"});
    v.push_back({"odd_200x104", "testsrc2=size=200x104:rate=25", 12, 8, fast + "--bframes 3"});
    v.push_back({"constrained_intra", t, 12, 8, fast + "--constrained-intra --b-intra --bframes 2",
                 "noise=alls=50:allf=t"});
    return v;
  }();
  return s;
}

namespace {

std::mutex g_mutex;

bool run(const std::string& cmd) {
  return std::system((cmd + " >/dev/null 2>&1").c_str()) == 0;
}

fs::path cache_dir() {
  return data_dir("hevc-streams");
}

}  // namespace

fs::path data_dir(const std::string& name) {
  // The GPU machine's bundle carries the data (scripts/device-bundle, SIGPU_BUNDLE_DATA).
  if (const char* d = std::getenv("SIGPU_DATA_DIR"); d && *d && fs::exists(fs::path(d) / name))
    return fs::path(d) / name;
  return sigpu::test::cache_dir(name);
}

std::string pix_fmt(int depth, bool mono) {
  const std::string base = mono ? "gray" : "yuv420p";
  return depth > 8 ? base + std::to_string(depth) + "le" : base;
}

bool have_tools() {
  static const bool ok = run("x265 --version") && run("ffmpeg -hide_banner -version");
  return ok;
}

std::vector<std::uint8_t> read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

bool encode(const std::string& source, int frames, int bit_depth, const std::string& x265_args,
            const fs::path& out, const std::string& filter, bool mono) {
  const fs::path y4m = out.string() + ".y4m";
  const std::string vf = filter.empty() ? "" : " -vf \"" + filter + "\"";
  const bool ok = run("ffmpeg -hide_banner -nostdin -y -f lavfi -i \"" + source + "\" -frames:v " +
                      std::to_string(frames) + vf + " -pix_fmt " + pix_fmt(bit_depth, mono) +
                      " -strict -1 \"" + y4m.string() + "\"") &&
                  run("x265 --log-level error --input \"" + y4m.string() + "\" --output-depth " +
                      std::to_string(bit_depth) + " --keyint 1 --hash 1 --frame-threads 1 " +
                      x265_args + " -o \"" + out.string() + "\"");
  fs::remove(y4m);
  return ok;
}

bool encode(const std::string& source, int frames, int bit_depth, const std::string& x265_args,
            const fs::path& out) {
  return encode(source, frames, bit_depth, x265_args, out, "", false);
}

fs::path stream_path(const StreamSpec& s) {
  std::lock_guard lock(g_mutex);
  const fs::path dir = cache_dir();
  const fs::path hevc = dir / (s.name + ".hevc"), ref = dir / (s.name + ".ref");
  if (fs::exists(hevc) && fs::exists(ref) && fs::exists(dir / (s.name + ".ffok"))) return hevc;
  if (!have_tools()) return {};
  fs::create_directories(dir);
  // ctest runs test processes side by side: each writes under names of its own, then renames.
  const std::string own = ".tmp" + std::to_string(::getpid());
  const fs::path tmp = dir / (s.name + own + ".hevc"), tmp_ref = dir / (s.name + own + ".ref");
  if (!encode(s.source, s.frames, s.bit_depth, s.x265, tmp, s.filter, s.mono)) return {};
  if (!run("ffmpeg -hide_banner -nostdin -y -i \"" + tmp.string() + "\" -f rawvideo -pix_fmt " +
           pix_fmt(s.bit_depth, s.mono) + " \"" + tmp_ref.string() + "\""))
    return {};
  // FFmpeg checks the MD5 SEI itself with -err_detect crccheck: where it reports a mismatch
  // (FFmpeg 5.1 gets cu_transquant_bypass with SAO and chroma QP offsets in deblocking wrong),
  // its output is no oracle and the tests rely on the MD5 alone.
  const bool ffmpeg_ok = std::system(("ffmpeg -hide_banner -nostdin -err_detect crccheck -i \"" +
                                      tmp.string() + "\" -f null - 2>&1 | grep -q mismatch")
                                         .c_str()) != 0;
  std::ofstream(dir / (s.name + ".ffok")) << (ffmpeg_ok ? 1 : 0);
  fs::rename(tmp_ref, ref);
  fs::rename(tmp, hevc);
  return hevc;
}

std::vector<std::uint8_t> reference(const StreamSpec& s) {
  const fs::path p = stream_path(s);
  if (p.empty()) return {};
  return read_file(fs::path(p).replace_extension(".ref"));
}

}  // namespace sigpu::hevc::testing

namespace sigpu::hevc::testing {

bool ffmpeg_verified(const StreamSpec& s) {
  const fs::path p = stream_path(s);
  if (p.empty()) return false;
  int ok = 0;
  std::ifstream(fs::path(p).replace_extension(".ffok")) >> ok;
  return ok == 1;
}

void RawDecode::add(const Frame& f) {
  for (int c = 0; c < 3; ++c) {
    const bool wide = (c ? f.bit_depth_chroma : f.bit_depth_luma) > 8;
    for (std::uint16_t v : f.planes[c]) {
      bytes.push_back(static_cast<std::uint8_t>(v & 0xff));
      if (wide) bytes.push_back(static_cast<std::uint8_t>(v >> 8));
    }
  }
  Frame copy = f;
  copy.planes[0].clear(), copy.planes[1].clear(), copy.planes[2].clear();
  frames.push_back(std::move(copy));
}

std::string problems_text(const std::vector<Problem>& ps) {
  std::string s;
  for (const auto& p : ps) s += p.message + "\n";
  return s;
}

}  // namespace sigpu::hevc::testing
