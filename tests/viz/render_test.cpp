// renderDot drives Graphviz the same way every time: one context for the process (viz/render.cpp
// says why), a layout and a rendering per picture, each freed. Rendering many pictures in one
// process must give the same bytes each time; under AddressSanitizer this is also the test of
// the use-after-free that a context per picture caused inside Graphviz's pango plugin.
#include <gtest/gtest.h>

#include <string>

#include "ir/error.h"
#include "viz/render.h"

namespace braid::viz {
namespace {

// Pinned nodes (`neato -n`, engine "nop") with text in two fonts and sizes, as the timelines have.
const char* kPinned =
    "digraph g { node [shape=box fontname=\"Helvetica\" fontsize=10];"
    " a [label=\"stream 1\" pos=\"0,0!\"]; b [label=\"allgather 4 MiB\" fontsize=8 pos=\"120,60!\"];"
    " c [label=\"mono\" fontname=\"Courier\" pos=\"240,0!\"]; a -> b [label=\"waits\"]; b -> c; }";

TEST(RenderDot, ManyPicturesInOneProcessAreIdentical) {
  if (!graphvizAvailable()) GTEST_SKIP() << "braid was built without Graphviz";
  std::string first = renderDot(kPinned, "nop", PictureFormat::kSvg);
  EXPECT_NE(first.find("allgather 4 MiB"), std::string::npos) << first;
  std::string png = renderDot(kPinned, "nop", PictureFormat::kPng);
  ASSERT_GT(png.size(), 8u);
  EXPECT_EQ(png.substr(1, 3), "PNG");
  std::string ranked = renderDot(kPinned, "dot", PictureFormat::kSvg);
  EXPECT_NE(ranked.find("<svg"), std::string::npos);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(renderDot(kPinned, "nop", PictureFormat::kSvg), first) << "picture " << i;
    EXPECT_EQ(renderDot(kPinned, "nop", PictureFormat::kPng), png) << "picture " << i;
  }
}

TEST(RenderDot, ABadGraphIsAnErrorAndTheNextPictureStillRenders) {
  if (!graphvizAvailable()) GTEST_SKIP() << "braid was built without Graphviz";
  EXPECT_THROW(renderDot("digraph { a -> ", "nop", PictureFormat::kSvg), Error);
  EXPECT_THROW(renderDot(kPinned, "no-such-engine", PictureFormat::kSvg), Error);
  EXPECT_NE(renderDot(kPinned, "nop", PictureFormat::kSvg).find("stream 1"), std::string::npos);
}

}  // namespace
}  // namespace braid::viz
