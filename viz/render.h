// Turning DOT text into a picture with Graphviz (libgvc): the format comes from the output
// file's extension. `.dot` is the DOT text itself and needs no Graphviz; `.svg` and `.png` need
// braid to be built with BRAID_WITH_GRAPHVIZ (otherwise an Error says so).
#pragma once

#include <string>

namespace braid::viz {

enum class PictureFormat { kDot, kSvg, kPng };
const char* pictureFormatName(PictureFormat f);  // "dot", "svg", "png"

// From the extension (case-insensitive); throws Error naming the file and the formats known.
PictureFormat pictureFormatOf(const std::string& path);

// Whether this build can lay out and render (BRAID_WITH_GRAPHVIZ).
bool graphvizAvailable();

// Graphviz layout engines used by viz: "dot" (ranked graphs) and "nop" (`neato -n`: every node
// has a pinned `pos`, edges are routed between them).
// Lays out `dot` with `engine` and renders it. For kDot returns the text unchanged (no layout).
// Throws Error with Graphviz's message when the text does not parse or the layout fails, and
// when Graphviz is not available.
std::string renderDot(const std::string& dot, const std::string& engine, PictureFormat format);

// renderDot into `path` (format from its extension).
void writePicture(const std::string& dot, const std::string& engine, const std::string& path);

}  // namespace braid::viz
