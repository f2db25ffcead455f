// `sigpu audio serve`: the control surface's HTTP and WebSocket server (Boost.Beast, one thread
// per connection) around a LiveEngine fed by a looped sound file or JACK.
//
//   GET  /             the page (serve_page.cpp)
//   GET  /api/state    the graph JSON, the effect descriptors, node levels, files for file params
//   GET  /api/levels   the latest meters and period-time statistics (also pushed on /ws)
//   POST /api/param    {"node", "param", "value"}: Engine::update, then the graph JSON
//   POST /api/graph    a whole graph JSON: validated, built and cross-faded in
//   GET  /ws           WebSocket: meters (graph inputs, outputs and every node's bus) and
//                      timing about 30 times a second
//
// With a token, every request must carry it (?token= or "Authorization: Bearer"); without one
// the server listens on loopback only and accepts only loopback Host names (no DNS rebinding).
#include <sigpu/audio.hpp>

#ifdef SIGPU_HAVE_AUDIO_SERVE
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <list>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "audio/effect.hpp"
#include "audio/graph.hpp"
#include "audio/live.hpp"
#include "audio/realtime.hpp"
#include "audio/serve_source.hpp"
#endif

namespace sigpu::audio {

#ifdef SIGPU_HAVE_AUDIO_SERVE
std::string_view serve_page();

namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using tcp = boost::asio::ip::tcp;

constexpr auto kMeterInterval = std::chrono::milliseconds(33);

double dbfs(float x) {
  return x > 1e-6f ? 20 * std::log10(x) : -120.0;
}

Json levels_json(const LiveLevels& l) {
  const auto db = [](const std::vector<float>& v) {
    Json a = Json::array();
    for (float x : v) a.push_back(std::round(dbfs(x) * 10) / 10);
    return a;
  };
  Json buses = Json::object();
  for (const BusMeter& b : l.buses) buses[b.node] = {{"peak", db(b.peak)}, {"rms", db(b.rms)}};
  return {{"in_peak", db(l.in_peak)},
          {"in_rms", db(l.in_rms)},
          {"out_peak", db(l.out_peak)},
          {"out_rms", db(l.out_rms)},
          {"buses", buses}};
}

Json timing_json(const LiveTiming& t) {
  return {{"buckets", t.buckets},
          {"periods", t.periods},
          {"late", t.late},
          {"xruns", t.xruns},
          {"max_us", t.max_us},
          {"deadline_us", t.deadline_us},
          {"p99_us", t.quantile_us(0.99)},
          {"p999_us", t.quantile_us(0.999)}};
}

Json effects_json() {
  Json out = Json::array();
  for (const auto& e : describe_effects()) {
    Json params = Json::array();
    for (const auto& p : e.params) {
      params.push_back({{"name", p.name},
                        {"type", p.type},
                        {"default", p.fallback},
                        {"lo", p.lo},
                        {"hi", p.hi},
                        {"unit", p.unit},
                        {"update", p.update},
                        {"help", p.help},
                        {"choices", p.choices},
                        {"required", p.required}});
    }
    out.push_back(
        {{"type", e.type}, {"summary", e.summary}, {"sidechain", e.sidechain}, {"params", params}});
  }
  return out;
}

/// A runtime value into the graph JSON, so that a later structural edit starts from it.
void set_param(Json& doc, std::string_view node, std::string_view param, double value) {
  for (auto& n : doc["nodes"]) {
    if (!n.is_object() || n.value("id", "") != node) continue;
    Json& params = n["params"];
    if (param.starts_with("band.")) {
      const auto dot = param.find('.', 5);
      const auto k = std::stoul(std::string(param.substr(5, dot - 5)));
      params["bands"][k][std::string(param.substr(dot + 1))] = value;
    } else {
      params[std::string(param)] = value;
    }
  }
}

bool same_token(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) diff |= a[i] ^ b[i];
  return diff == 0;
}

std::string query_value(std::string_view target, std::string_view key) {
  const auto q = target.find('?');
  if (q == std::string_view::npos) return {};
  std::string_view rest = target.substr(q + 1);
  while (!rest.empty()) {
    const auto amp = rest.find('&');
    const std::string_view pair = rest.substr(0, amp);
    if (pair.substr(0, key.size()) == key && pair.size() > key.size() && pair[key.size()] == '=') {
      return std::string(pair.substr(key.size() + 1));
    }
    rest = amp == std::string_view::npos ? std::string_view{} : rest.substr(amp + 1);
  }
  return {};
}

class Surface {
 public:
  Surface(const ServeOptions& o, LiveEngine& live, std::string text)
      : o_(o), live_(live), doc_(Json::parse(text)) {
    base_dir_ = std::filesystem::path(o.graph_path).parent_path().string();
  }

  /// Serves until `stop`; `ready` gets the bound port.
  void run(const std::atomic<bool>& stop, const std::function<void(int)>& ready) {
    boost::asio::io_context io;
    tcp::acceptor acceptor(io);
    try {
      const tcp::endpoint at(boost::asio::ip::make_address(o_.listen),
                             static_cast<unsigned short>(o_.port));
      acceptor.open(at.protocol());
      acceptor.set_option(boost::asio::socket_base::reuse_address(true));
      acceptor.bind(at);
      acceptor.listen();
      acceptor.non_blocking(true);
      port_ = acceptor.local_endpoint().port();
    } catch (const boost::system::system_error& e) {
      throw Error("serve: cannot listen on " + o_.listen + " port " + std::to_string(o_.port) +
                  ": " + e.what());
    }
    std::thread meters([&] { meter_loop(stop); });
    ready(port_);
    std::list<std::thread> sessions;
    while (!stop.load()) {
      pollfd p{acceptor.native_handle(), POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      beast::error_code ec;
      tcp::socket socket(io);
      acceptor.accept(socket, ec);
      if (ec) continue;
      socket.non_blocking(false);
      std::lock_guard lock(sockets_mutex_);
      sockets_.insert(socket.native_handle());
      sessions.emplace_back([this, s = std::move(socket), &stop]() mutable {
        const int fd = s.native_handle();
        session(std::move(s), stop);
        std::lock_guard lock(sockets_mutex_);
        sockets_.erase(fd);
      });
    }
    {
      // Wakes the sessions blocked in a read; each closes its own socket.
      std::lock_guard lock(sockets_mutex_);
      for (int fd : sockets_) ::shutdown(fd, SHUT_RDWR);
    }
    for (auto& t : sessions) t.join();
    meters.join();
  }

 private:
  using Request = http::request<http::string_body>;
  using Response = http::response<http::string_body>;

  void meter_loop(const std::atomic<bool>& stop) {
    while (!stop.load()) {
      std::this_thread::sleep_for(kMeterInterval);
      Json status{{"levels", levels_json(live_.levels())}, {"timing", timing_json(live_.timing())}};
      std::lock_guard lock(status_mutex_);
      status["seq"] = ++seq_;
      status_ = status.dump();
    }
  }

  std::string status() {
    std::lock_guard lock(status_mutex_);
    return status_.empty() ? "{}" : status_;
  }

  bool authorized(const Request& req) const {
    if (o_.token.empty()) {
      // Loopback only: refuse Host names a DNS-rebinding page could send.
      const std::string host(req[http::field::host]);
      const std::string port = ":" + std::to_string(port_);
      return host == "127.0.0.1" + port || host == "localhost" + port || host == "[::1]" + port;
    }
    const std::string_view auth = req[http::field::authorization];
    if (auth.starts_with("Bearer ") && same_token(auth.substr(7), o_.token)) return true;
    return same_token(query_value(req.target(), "token"), o_.token);
  }

  void session(tcp::socket socket, const std::atomic<bool>& stop) {
    beast::flat_buffer buffer;
    beast::error_code ec;
    for (;;) {
      http::request_parser<http::string_body> parser;
      parser.body_limit(kMaxGraphBytes);
      http::read(socket, buffer, parser, ec);
      if (ec) break;
      Request req = parser.release();
      if (!authorized(req)) {
        Response res{http::status::forbidden, req.version()};
        res.set(http::field::content_type, "text/plain");
        res.body() = o_.token.empty() ? "forbidden: only loopback Host names are served\n"
                                      : "forbidden: a valid token is required\n";
        res.prepare_payload();
        http::write(socket, res, ec);
        break;
      }
      if (websocket::is_upgrade(req)) {
        push_status(std::move(socket), req, stop);
        return;
      }
      Response res = handle(req);
      res.keep_alive(req.keep_alive());
      http::write(socket, res, ec);
      if (ec || !req.keep_alive()) break;
    }
    socket.shutdown(tcp::socket::shutdown_send, ec);
  }

  void push_status(tcp::socket socket, const Request& req, const std::atomic<bool>& stop) {
    websocket::stream<tcp::socket> ws(std::move(socket));
    beast::error_code ec;
    ws.accept(req, ec);
    while (!ec && !stop.load()) {
      ws.text(true);
      ws.write(boost::asio::buffer(status()), ec);
      std::this_thread::sleep_for(kMeterInterval);
    }
  }

  static Response reply(const Request& req, http::status status, std::string body,
                        const char* type = "application/json") {
    Response res{status, req.version()};
    res.set(http::field::content_type, type);
    res.set(http::field::cache_control, "no-store");
    res.body() = std::move(body);
    res.prepare_payload();
    return res;
  }
  static Response error(const Request& req, const std::string& what) {
    return reply(req, http::status::bad_request, Json{{"error", what}}.dump());
  }

  Response handle(const Request& req) {
    const std::string target(req.target().substr(0, req.target().find('?')));
    try {
      if (req.method() == http::verb::get && (target == "/" || target == "/index.html")) {
        return reply(req, http::status::ok, std::string(serve_page()), "text/html; charset=utf-8");
      }
      if (req.method() == http::verb::get && target == "/api/state") return state(req);
      if (req.method() == http::verb::get && target == "/api/levels") {
        return reply(req, http::status::ok, status());
      }
      if (req.method() == http::verb::post && target == "/api/param") return param(req);
      if (req.method() == http::verb::post && target == "/api/graph") return graph(req);
    } catch (const Error& e) {
      return error(req, e.what());
    } catch (const Json::exception& e) {
      return error(req, std::string("malformed request: ") + e.what());
    }
    return reply(req, http::status::not_found, Json{{"error", "not found"}}.dump());
  }

  Response state(const Request& req) {
    std::lock_guard lock(doc_mutex_);
    const Graph g = parse_graph(doc_.dump(), o_.variables, base_dir_);
    Json levels = Json::object();
    for (const auto& n : g.impl().nodes) levels[n.id] = n.level;
    Json files = Json::array();
    std::error_code ec;
    for (std::filesystem::recursive_directory_iterator it(base_dir_.empty() ? "." : base_dir_, ec),
         end;
         !ec && it != end; it.increment(ec)) {
      if (it.depth() > 2) it.disable_recursion_pending();
      const auto ext = it->path().extension();
      if (it->is_regular_file() && (ext == ".wav" || ext == ".flac" || ext == ".nam")) {
        files.push_back(
            std::filesystem::relative(it->path(), base_dir_.empty() ? "." : base_dir_).string());
      }
    }
    const Json body{{"graph", doc_},
                    {"effects", effects_json()},
                    {"levels", levels},
                    {"files", files},
                    {"period", live_.period()},
                    {"sample_rate", live_.sample_rate()},
                    {"backend", to_string(live_.backend())},
                    {"inputs", live_.inputs()},
                    {"outputs", live_.outputs()}};
    return reply(req, http::status::ok, body.dump());
  }

  Response param(const Request& req) {
    const Json j = Json::parse(req.body());
    const std::string node = j.at("node").get<std::string>();
    const std::string name = j.at("param").get<std::string>();
    const double value = j.at("value").get<double>();
    std::lock_guard lock(doc_mutex_);
    live_.update(node, name, value);
    set_param(doc_, node, name, value);
    return reply(req, http::status::ok, Json{{"ok", true}}.dump());
  }

  /// Files an edit names (IRs, models) must lie under the graph file's folder: a page must not
  /// make the server open whatever path it likes.
  void check_files(const Json& doc) const {
    namespace fs = std::filesystem;
    const fs::path root = fs::weakly_canonical(base_dir_.empty() ? "." : base_dir_);
    if (!doc.is_object() || !doc.contains("nodes") || !doc["nodes"].is_array()) return;
    for (const auto& n : doc["nodes"]) {
      if (!n.is_object() || !n.contains("params") || !n["params"].is_object()) continue;
      const auto* type = n.contains("type") && n["type"].is_string()
                             ? find_effect(n["type"].get<std::string>())
                             : nullptr;
      for (const ParamSpec& p : type ? type->params : std::span<const ParamSpec>{}) {
        const std::string name(p.name);
        if (p.type != ParamType::file || !n["params"].contains(name) ||
            !n["params"][name].is_string()) {
          continue;
        }
        const fs::path file = fs::weakly_canonical(root / n["params"][name].get<std::string>());
        const auto [end, _] = std::mismatch(root.begin(), root.end(), file.begin(), file.end());
        if (end != root.end()) {
          throw Error("node '" + n.value("id", "") + "' parameter '" + name + "': '" +
                      n["params"][name].get<std::string>() +
                      "' is outside the graph file's folder");
        }
      }
    }
  }

  Response graph(const Request& req) {
    Json doc = Json::parse(req.body());
    check_files(doc);
    std::lock_guard lock(doc_mutex_);
    live_.replace(parse_graph(req.body(), o_.variables, base_dir_));
    doc_ = std::move(doc);
    return reply(req, http::status::ok, Json{{"ok", true}}.dump());
  }

  const ServeOptions& o_;
  LiveEngine& live_;
  std::mutex doc_mutex_;
  Json doc_;  ///< the running graph, with runtime parameter changes written in
  std::string base_dir_;
  int port_ = 0;
  std::mutex status_mutex_;
  std::string status_;
  std::uint64_t seq_ = 0;
  std::mutex sockets_mutex_;
  std::set<int> sockets_;
};

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw InputError("serve: cannot read '" + path + "'");
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace

void serve(const ServeOptions& o, const std::atomic<bool>& stop) {
  if (o.loop_path.empty() == !o.jack) throw Error("serve: give one source: a loop file or JACK");
  const std::string text = read_text(o.graph_path);
  const std::string base = std::filesystem::path(o.graph_path).parent_path().string();
  const Graph graph = parse_graph(text, o.variables, base);
  auto source = o.jack ? make_jack_source(o) : make_loop_source(o, graph.inputs());
  LiveEngine live(graph, {.backend = o.backend,
                          .period = source->period(),
                          .sample_rate = source->sample_rate(),
                          .fifo_priority = o.rt_priority});
  Surface surface(o, live, text);
  std::atomic<bool> done{false};
  std::exception_ptr error;
  std::thread audio([&] {
    try {
      if (!o.jack) enter_realtime(o.rt_priority, {});  // JACK's driver does it on its own thread
      source->run(live, done);
    } catch (...) {
      error = std::current_exception();
    }
    done.store(true);
  });
  std::thread stopper([&] {
    const auto start = std::chrono::steady_clock::now();
    while (!stop.load() && !done.load()) {
      if (o.seconds > 0 &&
          std::chrono::steady_clock::now() - start > std::chrono::duration<double>(o.seconds)) {
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    done.store(true);
  });
  try {
    surface.run(done, [&](int port) {
      if (!o.on_ready) return;
      std::string url =
          "http://" + (o.listen.find(':') != std::string::npos ? "[" + o.listen + "]" : o.listen) +
          ":" + std::to_string(port) + "/";
      if (!o.token.empty()) url += "?token=" + o.token;
      o.on_ready(url);
    });
  } catch (...) {
    done.store(true);
    stopper.join();
    audio.join();
    throw;
  }
  stopper.join();
  audio.join();
  if (error) std::rethrow_exception(error);
}

#else

void serve(const ServeOptions&, const std::atomic<bool>&) {
  throw UnsupportedError("serve: sigpu was built without Boost.Beast (libboost-dev)");
}

#endif

}  // namespace sigpu::audio
