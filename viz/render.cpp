#include "viz/render.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <mutex>

#include "ir/error.h"

#ifdef BRAID_WITH_GRAPHVIZ
#include <gvc.h>
#endif

namespace braid::viz {

const char* pictureFormatName(PictureFormat f) {
  switch (f) {
    case PictureFormat::kDot:
      return "dot";
    case PictureFormat::kSvg:
      return "svg";
    case PictureFormat::kPng:
      return "png";
  }
  return "?";
}

PictureFormat pictureFormatOf(const std::string& path) {
  auto dot = path.rfind('.');
  std::string ext = dot == std::string::npos ? "" : path.substr(dot + 1);
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  if (ext == "dot" || ext == "gv") return PictureFormat::kDot;
  if (ext == "svg") return PictureFormat::kSvg;
  if (ext == "png") return PictureFormat::kPng;
  throw Error(path + ": unknown picture format \"" + ext + "\" (expected a file ending in .svg, .png or .dot)");
}

bool graphvizAvailable() {
#ifdef BRAID_WITH_GRAPHVIZ
  return true;
#else
  return false;
#endif
}

#ifdef BRAID_WITH_GRAPHVIZ
namespace {

// Graphviz reports errors through a process-wide callback; one rendering at a time collects them.
std::mutex gMutex;
std::string gMessages;

int collectMessage(char* text) {
  gMessages += text;
  return 0;
}

// One Graphviz context for the life of the process, created on first use (under gMutex) and never
// freed. Not for speed: Graphviz 2.42's pango text-layout plugin (Debian 12's) caches a pointer to
// the last font name it measured, and that name belongs to the context's font dictionary; after
// gvFreeContext, the next context's first label compares against freed memory (a
// heap-use-after-free that AddressSanitizer reports inside libgvplugin_pango, reproduced with
// Graphviz alone in docs/FUZZING.md, "Graphviz"). Later Graphviz releases copy the name. With one
// context the dictionary outlives every use, so sanitized and plain builds take the same path,
// with pango measuring text and cairo drawing PNGs. The context stays reachable from this static
// pointer, so it is no leak.
GVC_t* processContext() {
  static GVC_t* context = gvContext();
  return context;
}

std::string trimmed(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s;
}

}  // namespace
#endif

std::string renderDot(const std::string& dot, const std::string& engine, PictureFormat format) {
  if (format == PictureFormat::kDot) return dot;
#ifndef BRAID_WITH_GRAPHVIZ
  (void)dot;
  (void)engine;
  throw Error(std::string("cannot draw ") + pictureFormatName(format) +
              ": braid was built without Graphviz (install libgraphviz-dev and reconfigure), "
              "or write a .dot file and render it elsewhere with `neato -n` / `dot`");
#else
  std::lock_guard<std::mutex> lock(gMutex);
  gMessages.clear();
  agusererrf previousHandler = agseterrf(collectMessage);
  agerrlevel_t previousLevel = agseterr(AGERR);  // warnings are not errors
  struct Restore {
    agusererrf h;
    agerrlevel_t l;
    ~Restore() {
      agseterrf(h);
      agseterr(l);
    }
  } restore{previousHandler, previousLevel};

  GVC_t* gvc = processContext();
  if (!gvc) throw Error("Graphviz: cannot create a context");
  Agraph_t* g = agmemread(dot.c_str());
  if (!g) {
    throw Error("Graphviz could not read the generated graph: " + trimmed(gMessages));
  }
  std::string out;
  std::string failure;
  if (gvLayout(gvc, g, engine.c_str()) != 0) {
    failure = "Graphviz layout \"" + engine + "\" failed: " + trimmed(gMessages);
  } else {
    char* data = nullptr;
    unsigned int length = 0;
    if (gvRenderData(gvc, g, pictureFormatName(format), &data, &length) != 0) {
      failure = std::string("Graphviz cannot render ") + pictureFormatName(format) + ": " + trimmed(gMessages) +
                " (is the Graphviz plugin for this format installed?)";
    } else {
      out.assign(data, length);
    }
    if (data) gvFreeRenderData(data);
    gvFreeLayout(gvc, g);
  }
  agclose(g);
  if (!failure.empty()) throw Error(failure);
  return out;
#endif
}

void writePicture(const std::string& dot, const std::string& engine, const std::string& path) {
  PictureFormat format = pictureFormatOf(path);
  std::string data = renderDot(dot, engine, format);
  std::ofstream out(path, std::ios::binary);
  if (!out) throw Error(path + ": cannot write the picture");
  out << data;
  if (!out.good()) throw Error(path + ": write failed");
}

}  // namespace braid::viz
