// Reading back what viz renders, for the tests: an SVG parsed with Expat into its Graphviz
// groups (id, class, the first shape's bounding box, the text), and a PNG's chunk structure.
// Without Expat (BRAID_TEST_HAVE_EXPAT unset) parseSvg reports that it cannot parse.
#pragma once

#ifdef BRAID_TEST_HAVE_EXPAT
#include <expat.h>
#endif

#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace braid::testing {

struct SvgGroup {
  std::string id;
  std::string cls;  // Graphviz writes "node <our class>" / "edge <our class>"
  std::string title;
  double x0 = 1e300, y0 = 1e300, x1 = -1e300, y1 = -1e300;  // of its polygons (SVG coordinates)
  std::vector<std::string> texts;
  bool hasClass(const std::string& c) const {
    std::istringstream in(cls);
    std::string w;
    while (in >> w)
      if (w == c) return true;
    return false;
  }
};

struct SvgDoc {
  bool wellFormed = false;
  std::string error;  // Expat's message and line when not well formed
  std::string rootName;
  std::vector<SvgGroup> groups;  // every <g> with an id, in document order
  std::vector<SvgGroup> withClass(const std::string& c) const {
    std::vector<SvgGroup> out;
    for (const auto& g : groups)
      if (g.hasClass(c)) out.push_back(g);
    return out;
  }
  const SvgGroup* byId(const std::string& id) const {
    for (const auto& g : groups)
      if (g.id == id) return &g;
    return nullptr;
  }
};

#ifdef BRAID_TEST_HAVE_EXPAT
namespace detail {

struct SvgParse {
  SvgDoc doc;
  std::vector<int> stack;  // index into doc.groups of each open <g>, -1 for groups without id
  std::string element;     // the innermost open element's name
  bool inTitle = false, inText = false;
  std::string buffer;

  SvgGroup* current() {
    for (auto it = stack.rbegin(); it != stack.rend(); ++it)
      if (*it >= 0) return &doc.groups[static_cast<size_t>(*it)];
    return nullptr;
  }
};

inline void extend(SvgGroup& g, const char* points) {
  std::istringstream in(points);
  std::string pair;
  while (in >> pair) {
    auto comma = pair.find(',');
    if (comma == std::string::npos) continue;
    double x = std::stod(pair.substr(0, comma)), y = std::stod(pair.substr(comma + 1));
    g.x0 = std::min(g.x0, x);
    g.x1 = std::max(g.x1, x);
    g.y0 = std::min(g.y0, y);
    g.y1 = std::max(g.y1, y);
  }
}

inline void XMLCALL onStart(void* user, const XML_Char* name, const XML_Char** attrs) {
  auto* p = static_cast<SvgParse*>(user);
  std::map<std::string, std::string> a;
  for (size_t i = 0; attrs[i]; i += 2) a[attrs[i]] = attrs[i + 1];
  std::string n = name;
  if (p->doc.rootName.empty()) p->doc.rootName = n;
  if (n == "g") {
    int index = -1;
    if (a.count("id") && a.count("class")) {
      SvgGroup g;
      g.id = a["id"];
      g.cls = a["class"];
      p->doc.groups.push_back(g);
      index = static_cast<int>(p->doc.groups.size()) - 1;
    }
    p->stack.push_back(index);
  } else if (n == "polygon" && a.count("points")) {
    if (SvgGroup* g = p->current()) extend(*g, a["points"].c_str());
  } else if (n == "title" || n == "text") {
    p->inTitle = n == "title";
    p->inText = n == "text";
    p->buffer.clear();
  }
}

inline void XMLCALL onEnd(void* user, const XML_Char* name) {
  auto* p = static_cast<SvgParse*>(user);
  std::string n = name;
  if (n == "g") {
    p->stack.pop_back();
  } else if (n == "title" && p->inTitle) {
    if (SvgGroup* g = p->current()) g->title = p->buffer;
    p->inTitle = false;
  } else if (n == "text" && p->inText) {
    if (SvgGroup* g = p->current()) g->texts.push_back(p->buffer);
    p->inText = false;
  }
}

inline void XMLCALL onText(void* user, const XML_Char* s, int len) {
  auto* p = static_cast<SvgParse*>(user);
  if (p->inTitle || p->inText) p->buffer.append(s, static_cast<size_t>(len));
}

}  // namespace detail

inline SvgDoc parseSvg(const std::string& text) {
  detail::SvgParse p;
  XML_Parser parser = XML_ParserCreate("UTF-8");
  XML_SetUserData(parser, &p);
  XML_SetElementHandler(parser, detail::onStart, detail::onEnd);
  XML_SetCharacterDataHandler(parser, detail::onText);
  if (XML_Parse(parser, text.data(), static_cast<int>(text.size()), 1) == XML_STATUS_ERROR) {
    p.doc.error = std::string(XML_ErrorString(XML_GetErrorCode(parser))) + " at line " +
                  std::to_string(XML_GetCurrentLineNumber(parser));
  } else {
    p.doc.wellFormed = true;
  }
  XML_ParserFree(parser);
  return std::move(p.doc);
}
#endif

// Whether parseSvg is there (this build found Expat).
inline bool canParseSvg() {
#ifdef BRAID_TEST_HAVE_EXPAT
  return true;
#else
  return false;
#endif
}

struct PngInfo {
  bool wellFormed = false;
  std::string error;
  uint32_t width = 0, height = 0;
  int chunks = 0;
};

// Checks the signature, that the chunks run from IHDR to IEND exactly to the end of the file, and
// reads the size from IHDR (chunk CRCs are not checked).
inline PngInfo checkPng(const std::string& data) {
  PngInfo info;
  static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  auto u32 = [&](size_t at) {
    return (uint32_t(uint8_t(data[at])) << 24) | (uint32_t(uint8_t(data[at + 1])) << 16) |
           (uint32_t(uint8_t(data[at + 2])) << 8) | uint32_t(uint8_t(data[at + 3]));
  };
  if (data.size() < 8 || data.compare(0, 8, reinterpret_cast<const char*>(sig), 8) != 0) {
    info.error = "no PNG signature";
    return info;
  }
  size_t at = 8;
  std::string last;
  while (at + 12 <= data.size()) {
    uint32_t len = u32(at);
    std::string type = data.substr(at + 4, 4);
    if (info.chunks == 0) {
      if (type != "IHDR" || len != 13) {
        info.error = "the first chunk is not IHDR";
        return info;
      }
      info.width = u32(at + 8);
      info.height = u32(at + 12);
    }
    ++info.chunks;
    at += 12 + static_cast<size_t>(len);
    last = type;
    if (type == "IEND") break;
  }
  if (last != "IEND" || at != data.size()) {
    info.error = "the chunks do not end with IEND at the end of the file";
    return info;
  }
  info.wellFormed = info.width > 0 && info.height > 0;
  if (!info.wellFormed) info.error = "empty image";
  return info;
}

}  // namespace braid::testing
