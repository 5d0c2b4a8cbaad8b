// Malformed host IR: each error names the exact line:col and says what was expected and found;
// random truncations and mutations of the examples never crash the parser.
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/host_ir_text.h"
#include "ir/scalar_parser.h"

namespace braid {
namespace {

using ::testing::HasSubstr;

struct BadInput {
  const char* name;
  std::string text;
  int line;
  int col;
  const char* message;  // a substring of the error message
};

const std::string H = "%HostIrContainer { (T0_g_float[iS0{i0}, iS1{i2}]) -> () :\n";
const std::string F = "} // %HostIrContainer\n";

std::vector<BadInput> badInputs() {
  return {
      {"truncated", H + "  StartCoalescing\n", 3, 1, "unexpected end of file: expected '} // %HostIrContainer'"},
      {"truncated_in_statement", H + "  T1_l_float[iS4{i2}]\n     = Set( T0_g_float[iS0{i0}", 3, 31, "expected ']'"},
      {"truncated_kernel", H + "\nHostUnit0: Inputs={} -> Outputs={}Inputs:\nOutputs:\n\n%kernel {\n", 7, 1,
       "expected '} // %kernel'"},
      {"bad_character", H + "  StartCoalescing @\n" + F, 2, 19, "unexpected character '@'"},
      {"bad_byte", H + "  Start\x01\n" + F, 2, 8, "unexpected character byte 0x01"},
      {"deeper_line", H + "  StartCoalescing\n    EndCoalescing 3\n" + F, 3, 5, "unexpected indentation"},
      {"empty_for_body", H + "  FOR i from 0 to 4:\n  StartCoalescing\n" + F, 3, 3,
       "expected an indented body for the 'FOR' on line 2"},
      {"empty_for_at_end", H + "  FOR i from 0 to 4:\n" + F, 3, 1, "expected an indented body for the 'FOR' on line 2"},
      {"inconsistent_dedent", H + "  FOR i from 0 to 4:\n      StartCoalescing\n    StartCoalescing\n" + F, 4, 5,
       "inconsistent indentation"},
      {"left_of_body", H + "    StartCoalescing\n  StartCoalescing\n" + F, 3, 3, "left of the program body"},
      {"unknown_statement", H + "  Frobnicate 3\n" + F, 2, 3, "unknown statement 'Frobnicate'"},
      {"team_list",
       H + "  Communication 41 (type=Allgather, team=(0 1 2 3 input=T0_g_float, output=T0_g_float, backend=NCCL)\n" + F, 2,
       51, "expected ')' after team list, found 'input'"},
      {"unknown_comm_type", H + "  Communication 1 (type=AllFoo, input=T0, output=T0)\n" + F, 2, 25,
       "unknown communication type 'AllFoo'"},
      {"missing_output", H + "  Communication 1 (type=Allgather, input=T0)\n" + F, 3, 1, "needs both 'input=' and 'output='"},
      {"axis_not_in_input", H + "  T1_l_float[iS4{i2}]\n     = HirAliasSelect( T0_g_float, axis = iS7{i0}, index = 0 )\n" + F, 3,
       43, "axis iS7{i0} is not an axis of T0_g_float[iS0{i0}, iS1{i2}]"},
      {"undeclared_tensor", H + "  T5 = ALLOCATE(mem_type=global, zero_init=false)\n" + F, 2, 3,
       "tensor 'T5' is used before it is declared"},
      {"bad_iter_domain", "%HostIrContainer { (T0_g_float[iX0{i0}]) -> () :\n" + F, 1, 32, "expected an IterDomain"},
      {"bad_parallel_type", "%HostIrContainer { (T0_g_float[iblockIdx.x0{i0}]) -> () :\n" + F, 1, 32,
       "unknown parallel type"},
      {"else_without_if", H + "  StartCoalescing\n  ELSE:\n" + F, 3, 3, "'ELSE' without a matching 'IF'"},
      {"two_statements_one_line", H + "  StartCoalescing EndCoalescing 3\n" + F, 2, 19,
       "expected the end of the line after 'StartCoalescing', found 'EndCoalescing'"},
      {"missing_header", "  StartCoalescing\n" + F, 1, 3, "expected '%HostIrContainer'"},
      {"trailing_text", H + F + "StartCoalescing\n", 3, 1, "expected end of file"},
      {"unknown_op", H + "  T1_l_float[iS4{i2}]\n     = frobnicate( T0_g_float )\n" + F, 3, 8, "unknown operation 'frobnicate'"},
      {"missing_binary_operator", H + "  T1_l_float[iS4{i2}]\n     = T0_g_float T0_g_float\n" + F, 3, 19,
       "expected a binary operator"},
      {"indexed_get_current_stream", H + "  GetCurrentStream into Stream ( i + 1 )\n" + F, 2, 32,
       "captures into a stream variable"},
      {"set_stream_no_stream", H + "  SetCurrentStream to 3\n" + F, 2, 23, "expected 'Stream' after 'SetCurrentStream'"},
      {"duplicate_host_unit",
       H + "\nHostUnit0: Inputs={} -> Outputs={}\n%kernel {\n} // %kernel\nHostUnit0: Inputs={} -> Outputs={}\n%kernel {\n} // %kernel\n" + F,
       6, 1, "HostUnit0 is defined twice"},
      {"ragged_mesh", "%HostIrContainer { (T0_g_float[iS0{i0}] (DeviceMesh{{0 1} {2}})) -> () :\n" + F, 1, 61,
       "same length"},
      {"number_out_of_range", H + "  EndCoalescing 99999999999\n" + F, 2, 17, "out of range"},
      {"bad_bool", H + "  T0_g_float = ALLOCATE(mem_type=global, zero_init=maybe)\n" + F, 2, 52, "expected 'true' or 'false'"},
      // Dumps hard-wrapped by a web page: refused where the wrap is, never joined by guesswork.
      {"wrapped_number_in_mesh", "%HostIrContainer { (T0_g_float[iS0{i0}] (DeviceMesh{0 1 2 1\n2 13})) -> () :\n" + F, 2, 1,
       "'2' at the start of this line continues '1' at the end of line 1"},
      {"wrapped_header", "%HostIrContainer { (T0_g_float[iS0{i0}],\nT1_g_float[iS1{i0}]) -> () :\n" + F, 2, 1,
       "this line continues the statement that starts at line 1, column 1"},
      {"wrapped_kernel_op",
       H + "\nHostUnit0: Inputs={} -> Outputs={}\n%kernel {\nT1_l_float[iS4{i2}]\n= Set( T0_g_float, cache_op=Streaming )\n} // %kernel\n" + F,
       6, 1, "this line continues the statement that starts at line 5, column 1"},
      {"wrapped_name", H + "  SetCurrentStream to Stream ( StreamIdx % numberOf\nStreams )\n" + F, 3, 1,
       "'Streams' at the start of this line continues 'numberOf' at the end of line 2"},
      {"wrapped_in_share_mem_handles",
       H + "  ShareMemHandles(P2PCommunication 3 (type=send, buffer=T0_g_float, peer=1,\nbackend=CUDA), \n" + F, 3, 1,
       "this line continues the statement that starts at line 2, column 3"},
      // Truncated dumps.
      {"truncated_in_if", H + "  IF Manual ( rank == 0 ):\n    StartCoalescing\n", 4, 1,
       "unexpected end of file inside the body of the 'IF' on line 2"},
      {"truncated_host_unit_header", H + "\nHostUnit0: Inputs={T9_g_float[iS9{4}], } -> Outp", 3, 45,
       "expected 'Outputs' after '->'"},
      {"truncated_index_definitions", H + F + "\nIndex definitions:\n  i5 = i3 +", 5, 12, "expected a scalar expression"},
      {"truncated_share_mem_handles", H + "  ShareMemHandles(P2PCommunication 3 (type=send, buffer=T0_g_float", 2, 67,
       "expected ',' or ')' after the buffer of P2PCommunication"},
      // The new statements, malformed.
      {"index_definition_twice", H + F + "\nIndex definitions:\n  i5 = 3;\n  i5 = 4;\n", 6, 3,
       "i5 is defined twice in the index definitions"},
      {"index_definition_self", H + F + "\nIndex definitions:\n  i5 = i5 + 1;\n", 5, 3,
       "i5 is defined in terms of itself (i5 -> i5)"},
      {"mesh_device_twice", "%HostIrContainer { (T0_g_float[iS0{i0}] (DeviceMesh{0 1 1})) -> () :\n" + F, 1, 57,
       "device 1 appears twice in the device mesh"},
      {"team_device_twice", H + "  CollectivePermute 4 (team=(0 1 0), send_peer=1, recv_peer=1, input=T0_g_float, output=T0_g_float)\n" + F,
       2, 34, "device 0 appears twice in the team"},
      {"collective_permute_no_peer", H + "  CollectivePermute 4 (team=(0 1), input=T0_g_float, output=T0_g_float)\n" + F, 3, 1,
       "CollectivePermute 4 needs 'send_peer=', 'recv_peer=', 'input=' and 'output='"},
      {"unknown_dtype", H + "  T4_g___e4m3[iS5{4}] = ALLOCATE(mem_type=global, zero_init=false)\n" + F, 2, 3,
       "tensor 'T4_g___e4m3' has a data type braid does not know"},
      {"unknown_memory", H + "  T4_q_float[iS5{4}] = ALLOCATE(mem_type=global, zero_init=false)\n" + F, 2, 3,
       "tensor 'T4_q_float' has a memory type braid does not know"},
      {"moe_dispatch", H + "  MoeDispatch(T0_g_float)\n" + F, 2, 3, "MoeDispatch"},
      {"launch_kernel_scalar_output", H + "  LaunchKernel(Inputs: {T0_g_float, }, Outputs: {i3, })\n" + F, 2, 50,
       "a LaunchKernel output must be a tensor, found 'i3'"},
      {"launch_kernel_no_outputs", H + "  LaunchKernel(\n    Group ID: 0,\n    Inputs: {T0_g_float},\n  )\n" + F, 5, 3,
       "expected 'Outputs' in LaunchKernel, found ')'"},
      {"alias_allocate", H + "  T0_g_float = ALLOCATE(buffer=T0_g_float, mem_type=global, size=4, zero_init=false, resets_to_zero=false)\n      .alias=T0_g_float\n" + F,
       3, 7, "an ALLOCATE that aliases another buffer ('.alias=') is not supported"},
      {"scalar_statement_without_value", H + "  i45 = ;\n" + F, 2, 9, "expected a scalar expression"},
      {"unbalanced_opaque_kernel",
       H + "\nHostUnit0: Inputs={} -> Outputs={}\n%kernel {\nb3 = ( i1 < 2;\n} // %kernel\n" + F, 6, 1,
       "unbalanced '}' in the kernel of HostUnit0"},
      {"slice_without_ranges", H + "  T4_l_float[iS5{4}]\n     = slice( T0_g_float, {0, 4, 1} )\n" + F, 3, 28,
       "expected '}' after the slice ranges"},
      {"select_axis_not_in_input", H + "  T4_l_float[iS5{4}]\n     = select( T0_g_float, axis = iS9{4}, index = 0 )\n" + F, 3, 35,
       "axis iS9{4} is not an axis of"},
      {"elision_in_kernel_position_without_header", H + "\n...\nStartCoalescing\n" + F, 4, 1, "expected '}' to close the program"},
      {"statement_after_non_joinable", H + "  Synchronize(Stream 0) StartCoalescing\n" + F, 2, 25,
       "expected the end of the line after 'Synchronize'"},
  };
}

TEST(HostIrErrors, ExactLocationsAndMessages) {
  for (const auto& b : badInputs()) {
    SCOPED_TRACE(b.name);
    try {
      parseHostProgram(b.text, "bad.hir");
      ADD_FAILURE() << "no error for:\n" << b.text;
    } catch (const ParseError& e) {
      EXPECT_EQ(e.loc().file, "bad.hir");
      EXPECT_EQ(e.loc().line, b.line) << e.what();
      EXPECT_EQ(e.loc().col, b.col) << e.what();
      EXPECT_THAT(e.message(), HasSubstr(b.message));
      EXPECT_THAT(std::string(e.what()), HasSubstr("bad.hir:" + std::to_string(b.line) + ":" + std::to_string(b.col) +
                                                   ": error: "));
    }
  }
}

TEST(HostIrErrors, FilesInDataDirectory) {
  // tests/ir/data/malformed/<name>.hir: the first line is a comment `// expect: LINE:COL message`.
  namespace fs = std::filesystem;
  int n = 0;
  for (const auto& e : fs::directory_iterator(fs::path(BRAID_TEST_DATA_DIR) / "ir" / "data" / "malformed")) {
    SCOPED_TRACE(e.path().string());
    std::ifstream in(e.path());
    std::string first;
    std::getline(in, first);
    int line = 0, col = 0;
    char msg[256] = {0};
    ASSERT_EQ(std::sscanf(first.c_str(), "// expect: %d:%d %255[^\n]", &line, &col, msg), 3) << first;
    try {
      parseHostProgramFile(e.path().string());
      ADD_FAILURE() << "no error";
    } catch (const ParseError& err) {
      EXPECT_EQ(err.loc().line, line) << err.what();
      EXPECT_EQ(err.loc().col, col) << err.what();
      EXPECT_THAT(err.message(), HasSubstr(msg));
      EXPECT_EQ(err.loc().file, e.path().string());
    }
    ++n;
  }
  EXPECT_GE(n, 3);
}

TEST(HostIrErrors, DeepNestingIsAnErrorNotACrash) {
  std::string deep(5000, '(');
  EXPECT_THROW(parseScalar(deep + "1" + std::string(5000, ')')), ParseError);
  EXPECT_THROW(parseScalar(std::string(5000, '!') + "x"), ParseError);
  EXPECT_EQ(parseScalar("((((x))))").str(), "x");
}

std::vector<std::string> exampleTexts() {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  const fs::path data = fs::path(BRAID_TEST_DATA_DIR) / "ir" / "data";
  for (const auto& dir : {fs::path(BRAID_SOURCE_DIR) / "examples", data / "hostir_md", data / "dialects" / "oldest",
                          data / "dialects" / "to_stream", data / "dialects" / "today"}) {
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.path().extension() != ".hir") continue;
      std::ifstream in(e.path());
      std::stringstream ss;
      ss << in.rdbuf();
      out.push_back(ss.str());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Parses `text`: it either succeeds (and then prints to a fixed point) or throws ParseError.
void parseOrParseError(const std::string& text) {
  try {
    HostProgram p = parseHostProgram(text, "fuzz.hir");
    std::string once = print(p);
    EXPECT_EQ(print(parseHostProgram(once)), once) << "input:\n" << text;
  } catch (const ParseError& e) {
    EXPECT_TRUE(e.loc().known()) << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not a ParseError: " << e.what() << "\ninput:\n" << text;
  }
}

// A web page that wraps long lines at a fixed width breaks them anywhere, inside a word or
// between two. Every such dump is refused with a message that says it looks hard-wrapped, on a
// line the wrap made, unless the wrap changed nothing a reader could misread (a lone closing
// parenthesis at the statement's column), in which case it reads as the original program.
TEST(HostIrErrors, FixedWidthWrapsAreRefusedWhereTheyAre) {
  int refused = 0, harmless = 0;
  for (const std::string& text : exampleTexts()) {
    HostProgram original = parseHostProgram(text, "original.hir");
    for (size_t width : {60, 72, 80, 100, 120}) {
      std::string wrapped;
      std::set<int> made;  // lines that the wrap created
      int line = 1;
      std::istringstream in(text);
      for (std::string l; std::getline(in, l);) {
        while (l.size() > width) {
          wrapped += l.substr(0, width) + "\n";
          l = l.substr(width);
          made.insert(++line);
        }
        wrapped += l + "\n";
        ++line;
      }
      if (made.empty()) continue;
      SCOPED_TRACE("width " + std::to_string(width) + ":\n" + wrapped);
      try {
        HostProgram p = parseHostProgram(wrapped, "wrapped.hir");
        std::string why;
        EXPECT_TRUE(structurallyEqual(original, p, &why)) << why;
        ++harmless;
      } catch (const ParseError& e) {
        EXPECT_THAT(e.message(), HasSubstr("hard-wrapped"));
        EXPECT_TRUE(made.count(e.loc().line)) << e.what();
        ++refused;
      }
    }
  }
  EXPECT_GT(refused, 50);
  EXPECT_LT(harmless, refused / 10 + 1);
}

TEST(HostIrErrors, FuzzTruncations) {
  for (const std::string& text : exampleTexts()) {
    size_t step = std::max<size_t>(1, text.size() / 60);
    for (size_t cut = 0; cut < text.size(); cut += step) parseOrParseError(text.substr(0, cut));
  }
}

TEST(HostIrErrors, FuzzMutations) {
  std::mt19937 rng(12345);
  const std::string alphabet = " \n\t(){}[],:;=!<>+-*/%&|#@Ti0x_.Sr";
  auto texts = exampleTexts();
  for (int round = 0; round < 1500; ++round) {
    std::string t = texts[static_cast<size_t>(round) % texts.size()];
    int edits = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < edits && !t.empty(); ++k) {
      size_t pos = rng() % t.size();
      switch (rng() % 5) {
        case 0: t.erase(pos, 1 + rng() % 8); break;
        case 1: t.insert(pos, 1, alphabet[rng() % alphabet.size()]); break;
        case 2: t[pos] = alphabet[rng() % alphabet.size()]; break;
        case 3: {  // duplicate a chunk
          size_t len = std::min<size_t>(t.size() - pos, 1 + rng() % 40);
          t.insert(rng() % t.size(), t.substr(pos, len));
          break;
        }
        default: {  // insert spaces at a line start (indentation changes)
          size_t nl = t.find('\n', pos);
          if (nl != std::string::npos) t.insert(nl + 1, std::string(1 + rng() % 4, ' '));
        }
      }
    }
    parseOrParseError(t);
  }
}

}  // namespace
}  // namespace braid
