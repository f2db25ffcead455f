#include "prores/clips.hpp"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <mutex>

#include "support/cache.hpp"

namespace sigpu::prores::testing {
namespace fs = std::filesystem;

const std::vector<ClipSpec>& standard_clips() {
  static const std::vector<ClipSpec> clips = [] {
    std::vector<ClipSpec> c;
    const std::string t = "testsrc2=size=320x180:rate=25";
    for (int p = 0; p <= 3; ++p)
      c.push_back(
          {"ks_p" + std::to_string(p), t, 2, "-c:v prores_ks -profile:v " + std::to_string(p)});
    c.push_back({"ks_4444", t, 2, "-c:v prores_ks -profile:v 4 -pix_fmt yuv444p10le"});
    c.push_back({"ks_4444xq", "mandelbrot=size=320x180:rate=25", 2,
                 "-c:v prores_ks -profile:v 5 -pix_fmt yuv444p10le"});
    c.push_back({"ks_4444_alpha16", t, 2,
                 "-c:v prores_ks -profile:v 4 -pix_fmt yuva444p10le -alpha_bits 16",
                 "format=yuva444p10le,geq=lum='lum(X,Y)':cb='cb(X,Y)':cr='cr(X,Y)':a='X*4'"});
    c.push_back({"ks_4444xq_alpha8", t, 2,
                 "-c:v prores_ks -profile:v 5 -pix_fmt yuva444p10le -alpha_bits 8",
                 "format=yuva444p10le,geq=lum='lum(X,Y)':cb='cb(X,Y)':cr='cr(X,Y)':a='(X*Y)/20'"});
    for (int p = 0; p <= 3; ++p)
      c.push_back({"aw_p" + std::to_string(p), "smptehdbars=size=320x180:rate=25", 2,
                   "-c:v prores_aw -profile:v " + std::to_string(p)});
    c.push_back({"aw_4444", t, 2, "-c:v prores_aw -profile:v 4 -pix_fmt yuv444p10le"});
    c.push_back({"aw_4444_alpha", t, 2, "-c:v prores_aw -profile:v 4 -pix_fmt yuva444p10le",
                 "format=yuva444p10le,geq=lum='lum(X,Y)':cb='cb(X,Y)':cr='cr(X,Y)':a='Y*5'"});
    c.push_back({"ks_tff", t, 2, "-c:v prores_ks -profile:v 3 -flags +ildct", "setfield=tff"});
    c.push_back({"ks_bff_4444", t, 2,
                 "-c:v prores_ks -profile:v 4 -pix_fmt yuv444p10le -flags +ildct", "setfield=bff"});
    c.push_back({"aw_tff", t, 2, "-c:v prores_aw -profile:v 2 -flags +ildct", "setfield=tff"});
    c.push_back({"ks_noise_q1", "testsrc2=size=320x180:rate=25", 1,
                 "-c:v prores_ks -profile:v 3 -q:v 1", "noise=alls=100:allf=t"});
    c.push_back({"ks_noise_q31", "testsrc2=size=320x180:rate=25", 1,
                 "-c:v prores_ks -profile:v 0 -q:v 31", "noise=alls=60:allf=t"});
    c.push_back({"ks_4444_noise_q1", "testsrc2=size=320x180:rate=25", 1,
                 "-c:v prores_ks -profile:v 5 -pix_fmt yuv444p10le -q:v 1",
                 "noise=alls=100:allf=t"});
    for (int m : {1, 2, 4})
      c.push_back({"ks_mbs" + std::to_string(m), "mandelbrot=size=240x128:rate=25", 1,
                   "-c:v prores_ks -profile:v 2 -mbs_per_slice " + std::to_string(m)});
    c.push_back({"ks_vendor", t, 1, "-c:v prores_ks -profile:v 1 -vendor apl0"});
    c.push_back(
        {"odd_1000x562", "testsrc2=size=1000x562:rate=25", 1, "-c:v prores_ks -profile:v 3"});
    c.push_back({"odd_1000x562_i", "testsrc2=size=1000x562:rate=25", 1,
                 "-c:v prores_aw -profile:v 4 -pix_fmt yuv444p10le -flags +ildct", "setfield=bff"});
    c.push_back({"tiny_16x16", "testsrc2=size=16x16:rate=25", 2, "-c:v prores_ks -profile:v 2"});
    c.push_back({"tiny_8x8", "testsrc2=size=8x8:rate=25", 2,
                 "-c:v prores_ks -profile:v 4 "
                 "-pix_fmt yuv444p10le"});
    c.push_back({"odd_250x74", "testsrc2=size=250x74:rate=25", 2,
                 "-c:v prores_ks -profile:v 3 -mbs_per_slice 2", "noise=alls=40:allf=t"});
    // A fuzzed-but-valid set: sizes, profiles, encoders, slice sizes, scan and quantiser
    // drawn from a fixed-seed generator (the same clips on every run).
    std::uint32_t state = 1;
    auto draw = [&](std::uint32_t n) {
      state = state * 1664525u + 1013904223u;
      return (state >> 8) % n;
    };
    for (int i = 0; i < 6; ++i) {
      // testsrc2 makes nothing narrower or lower than 2.
      const int w = 2 + static_cast<int>(draw(300)), h = 2 + static_cast<int>(draw(200));
      const int profile = static_cast<int>(draw(6));
      const bool aw = draw(3) == 0 && profile <= 4, alpha = profile >= 4 && draw(2);
      const bool interlaced = draw(3) == 0;
      std::string enc =
          aw ? "-c:v prores_aw" : "-c:v prores_ks -mbs_per_slice " + std::to_string(1 << draw(4));
      enc += " -profile:v " + std::to_string(profile);
      if (!aw && draw(2)) enc += " -q:v " + std::to_string(1 + draw(31));
      if (profile >= 4) enc += alpha ? " -pix_fmt yuva444p10le" : " -pix_fmt yuv444p10le";
      if (interlaced) enc += " -flags +ildct";
      const bool tff = draw(2);
      std::string vf = "noise=alls=" + std::to_string(draw(60)) + ":allf=t";
      if (interlaced) vf += tff ? ",setfield=tff" : ",setfield=bff";
      if (alpha) vf += ",format=yuva444p10le,geq=lum='lum(X,Y)':cb='cb(X,Y)':cr='cr(X,Y)':a='X*Y'";
      c.push_back({"random" + std::to_string(i) + (alpha ? "_alpha" : "") +
                       (interlaced ? (tff ? "_tff" : "_bff") : ""),
                   "testsrc2=size=" + std::to_string(w) + "x" + std::to_string(h) + ":rate=25", 2,
                   enc, vf});
    }
    c.push_back(
        {"large_4096x2160", "testsrc2=size=4096x2160:rate=25", 1, "-c:v prores_ks -profile:v 3"});
    c.push_back(
        {"large_8192x4320", "testsrc2=size=8192x4320:rate=25", 1, "-c:v prores_ks -profile:v 2"});
    return c;
  }();
  return clips;
}

void PrintTo(const ClipSpec& spec, std::ostream* os) {
  *os << spec.name;
}

bool have_ffmpeg() {
  static const bool ok = std::system("ffmpeg -hide_banner -version >/dev/null 2>&1") == 0;
  return ok;
}

fs::path clip_dir() {
  return sigpu::test::cache_dir("prores-clips");
}

std::vector<std::uint8_t> read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<std::uint8_t> frame_bytes(const Clip& clip, std::size_t i) {
  std::vector<std::uint8_t> buffer;
  const auto f = clip.frame(i, buffer);
  return {f.begin(), f.end()};
}

namespace {

std::mutex g_make_mutex;

bool run(const std::string& cmd) {
  return std::system((cmd + " >/dev/null 2>&1").c_str()) == 0;
}

}  // namespace

fs::path clip_path(const ClipSpec& s) {
  std::lock_guard lock(g_make_mutex);
  const fs::path dir = clip_dir();
  const fs::path mov = dir / (s.name + ".mov"), ref = dir / (s.name + ".ref");
  if (fs::exists(mov) && fs::exists(ref)) return mov;
  if (!have_ffmpeg()) return {};
  fs::create_directories(dir);
  // ctest runs test processes side by side: each writes under names of its own, then renames.
  const std::string own = ".tmp" + std::to_string(::getpid());
  const fs::path tmp_mov = dir / (s.name + own + ".mov"), tmp_ref = dir / (s.name + own + ".ref");
  const std::string vf = s.filter.empty() ? "" : " -vf \"" + s.filter + "\"";
  if (!run("ffmpeg -hide_banner -nostdin -y -f lavfi -i \"" + s.source + "\" -frames:v " +
           std::to_string(s.frames) + vf + " " + s.encode + " -an \"" + tmp_mov.string() + "\""))
    return {};
  // FFmpeg's decoding in its native pixel format (no conversion), and that format's name.
  if (!run("ffmpeg -hide_banner -nostdin -y -i \"" + tmp_mov.string() + "\" -f rawvideo \"" +
           tmp_ref.string() + "\"") ||
      std::system(("ffprobe -v error -select_streams v:0 -show_entries stream=pix_fmt -of csv=p=0 "
                   "\"" +
                   tmp_mov.string() + "\" > \"" + tmp_ref.string() + ".fmt\" 2>/dev/null")
                      .c_str()) != 0)
    return {};
  fs::rename(tmp_ref.string() + ".fmt", ref.string() + ".fmt");
  fs::rename(tmp_ref, ref);
  fs::rename(tmp_mov, mov);
  return mov;
}

fs::path find_clip(const ClipSpec& s) {
  // The GPU machine's bundle carries the MOVs (no references: that machine has no ffmpeg).
  if (const char* d = std::getenv("SIGPU_DATA_DIR"); d && *d) {
    const fs::path mov = fs::path(d) / "prores-clips" / (s.name + ".mov");
    if (fs::exists(mov)) return mov;
  }
  const fs::path mov = clip_dir() / (s.name + ".mov");
  if (fs::exists(mov)) return mov;
  return clip_path(s);
}

std::vector<std::uint8_t> reference(const ClipSpec& s, std::string& pix_fmt) {
  const fs::path ref = clip_dir() / (s.name + ".ref");
  std::ifstream f(ref.string() + ".fmt");
  std::getline(f, pix_fmt);
  return read_file(ref);
}

}  // namespace sigpu::prores::testing
