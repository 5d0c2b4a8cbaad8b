// The host IR text format: every node printed in both dialects (golden text), parsed back to an
// equal program, and the forms of nvFuser's dumps that only the parser accepts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/host_ir_text.h"
#include "ir/scalar_parser.h"

namespace braid {
namespace {

using ::testing::HasSubstr;

Scalar sym(const char* n) { return Scalar::symbol(n); }
Scalar bin(ScalarOp op, Scalar a, Scalar b) { return Scalar::binary(op, std::move(a), std::move(b)); }

// A program with one input T0[iS0{i0}, iS1{i2}] and one output T1[iStreamIdx2{i0}, iS3{i2}], to
// which tests add statements.
struct Builder {
  HostProgram p;
  Fusion& f = p.tensors();

  TensorView* tv(int name, std::vector<IterDomain*> ids, MemoryType mem = MemoryType::kGlobal,
                 DataType dt = DataType::kFloat) {
    return f.newTensor(std::move(ids), dt, mem, name);
  }
  IterDomain* id(int n, Scalar e, ParallelType p = ParallelType::kSerial, IterType t = IterType::kIteration,
                 bool rf = false) {
    return f.newIterDomain(std::move(e), t, p, rf, n);
  }
  template <class S>
  S* add(Scope& scope, std::unique_ptr<S> s) {
    S* raw = s.get();
    scope.push_back(std::move(s));
    return raw;
  }
  template <class S>
  S* add(std::unique_ptr<S> s) {
    return add(p.body(), std::move(s));
  }
};

std::string header(const std::string& ins, const std::string& outs) {
  return "%HostIrContainer { (" + ins + ") -> (" + outs + ") :\n";
}
const char* kFooter = "} // %HostIrContainer\n";

// Prints `p` in `dialect`, compares with `golden`, parses the golden text back and checks that
// it is structurally equal to `p` and prints identically.
void checkGolden(const HostProgram& p, const std::string& golden, HostIrDialect dialect = HostIrDialect::kLegacy) {
  PrintOptions o;
  o.dialect = dialect;
  EXPECT_EQ(print(p, o), golden);
  HostProgram q = parseHostProgram(golden, "golden.hir");
  std::string why;
  EXPECT_TRUE(structurallyEqual(p, q, &why)) << why;
  EXPECT_EQ(print(q, o), golden);
}

TEST(HostIrText, EmptyProgram) {
  HostProgram p;
  checkGolden(p, header("", "") + kFooter);
}

TEST(HostIrText, AllocateBothForms) {
  Builder b;
  auto* t0 = b.tv(0, {b.id(0, sym("i0")), b.id(1, sym("i2"))});
  b.p.inputs().push_back(t0);
  auto a = std::make_unique<Allocate>();
  a->tv = t0;
  a->size = bin(ScalarOp::kMul, sym("i0"), sym("i2"));
  b.add(std::move(a));
  auto m = std::make_unique<Allocate>();
  m->tv = t0;
  m->legacy = false;
  m->zeroInit = true;
  b.add(std::move(m));
  const std::string t = "T0_g_float[iS0{i0}, iS1{i2}]";
  std::string golden = header(t, "") + "  " + t + " = ALLOCATE(buffer=" + t +
                       ", mem_type=global, size=( i0 * i2 ), zero_init=false, resets_to_zero=false)\n  " + t +
                       " = ALLOCATE(mem_type=global, zero_init=true)\n" + kFooter;
  checkGolden(b.p, golden);
  // The ALLOCATE form is semantic (allocate-if-unbound vs always): the dialect does not change it.
  checkGolden(b.p, golden, HostIrDialect::kModern);
}

// The statements of nvFuser's stream-parallel copy, in both dialects.
TEST(HostIrText, StreamStatementsBothDialects) {
  Builder b;
  auto* t0 = b.tv(0, {b.id(0, sym("i0")), b.id(1, sym("i2"))});
  IterDomain* s2 = b.id(2, sym("i0"), ParallelType::kStream);
  auto* t1 = b.tv(1, {s2, b.id(3, sym("i2"))});
  auto* t2 = b.tv(2, {b.id(4, sym("i2"))}, MemoryType::kLocal);
  b.p.inputs().push_back(t0);
  b.p.outputs().push_back(t1);
  auto loop = std::make_unique<ForLoop>();
  loop->index = "StreamIdx";
  loop->domain = s2;
  Scope& body = loop->body;
  auto g = std::make_unique<GetCurrentStream>();
  g->stream = StreamRef::named("0");
  b.add(body, std::move(g));
  auto set = std::make_unique<SetCurrentStream>();
  set->stream = StreamRef::indexed(bin(ScalarOp::kMod, sym("StreamIdx"), sym("numberOfStreams")));
  b.add(body, std::move(set));
  auto sync = std::make_unique<Synchronize>();
  sync->stream = StreamRef::named("0");
  b.add(body, std::move(sync));
  auto sel = std::make_unique<AliasSelect>();
  sel->out = t2;
  sel->in = t0;
  sel->axis = t0->loop()[0];
  sel->index = sym("StreamIdx");
  b.add(body, std::move(sel));
  auto dealloc = std::make_unique<Deallocate>();
  dealloc->tv = t2;
  b.add(body, std::move(dealloc));
  b.add(std::move(loop));

  const std::string T0 = "T0_g_float[iS0{i0}, iS1{i2}]", T1 = "T1_g_float[iStreamIdx2{i0}, iS3{i2}]",
                    T2 = "T2_l_float[iS4{i2}]";
  const std::string sel_text = "    " + T2 + "\n       = HirAliasSelect( " + T0 + ", axis = iS0{i0}, index = StreamIdx )\n";
  checkGolden(b.p,
              header(T0, T1) + "  FOR StreamIdx in iStreamIdx2{i0}:\n    GetCurrentStream into Stream 0\n"
                               "    SetCurrentStream to Stream ( StreamIdx % numberOfStreams )\n"
                               "    Synchronize Stream 0\n" +
                  sel_text + "    Deallocate " + T2 + "\n" + kFooter);
  const std::string T1today = "T1_g_float[istreamIdx2{i0}, iS3{i2}]";  // today's spelling of Stream
  checkGolden(b.p,
              header(T0, T1today) + "  FOR StreamIdx in istreamIdx2{i0}:\n    Stream 0 = GetCurrentStream()\n"
                               "    SetCurrentStream(Stream ( StreamIdx % numberOfStreams ))\n"
                               "    Synchronize(Stream 0)\n" +
                  sel_text + "    Deallocate {\n      " + T2 + "\n    }\n" + kFooter,
              HostIrDialect::kModern);
}

TEST(HostIrText, CountedLoopShardByStreamAndIndexedConstantStream) {
  Builder b;
  auto* t3 = b.tv(3, {b.id(6, 4, ParallelType::kStream), b.id(7, ceilDiv(sym("i0"), 4))});
  auto* t12 = b.tv(12, {b.id(9, 4, ParallelType::kStream), b.id(10, ceilDiv(sym("i0"), 4))}, MemoryType::kLocal);
  b.p.inputs().push_back(t3);
  auto loop = std::make_unique<ForLoop>();
  loop->index = "i17";
  loop->start = 0;
  loop->stop = 4;
  auto set = std::make_unique<SetCurrentStream>();
  set->stream = StreamRef::indexed(sym("i17"));
  b.add(loop->body, std::move(set));
  auto shard = std::make_unique<ShardByStream>();
  shard->out = t12;
  shard->in = t3;
  shard->streamIndex = sym("i17");
  b.add(loop->body, std::move(shard));
  auto sync = std::make_unique<Synchronize>();
  sync->stream = StreamRef::indexed(Scalar(3));  // an indexed stream with a constant key
  b.add(loop->body, std::move(sync));
  b.add(std::move(loop));
  const std::string T3 = "T3_g_float[iStreamIdx6{4}, iS7{( ceilDiv(i0, 4) )}]";
  checkGolden(b.p, header(T3, "") +
                       "  FOR i17 from 0 to 4:\n"
                       "    SetCurrentStream to Stream i17\n"
                       "    T12_l_float[iStreamIdx9{4}, iS10{( ceilDiv(i0, 4) )}] = ShardByStream(" + T3 +
                       ", stream_index = i17)\n"
                       "    Synchronize Stream ( 3 )\n" + kFooter);
}

TEST(HostIrText, IfThenElseAndP2P) {
  Builder b;
  auto* t5 = b.tv(5, {b.id(1, sym("i2"))}, MemoryType::kLocal);
  auto* t0 = b.tv(0, {b.id(0, sym("i2"))});
  t0->setDeviceMesh(DeviceMesh::range(4));
  b.p.inputs().push_back(t0);
  auto branch = std::make_unique<IfThenElse>();
  branch->predicate = bin(ScalarOp::kEq, sym("StreamIdx"), sym("deviceIdx.x"));
  auto set = std::make_unique<HostOp>();
  set->op = b.f.newExpr(OpType::kSet, {t0}, {t5});
  b.add(branch->thenBody, std::move(set));
  b.add(branch->elseBody, std::make_unique<StartCoalescing>());
  auto recv = std::make_unique<P2PCommunication>();
  recv->id = 43;
  recv->type = P2PType::kRecv;
  recv->buffer = t5;
  recv->peer = sym("StreamIdx");
  b.add(branch->elseBody, std::move(recv));
  auto send = std::make_unique<P2PCommunication>();
  send->id = 44;
  send->buffer = t0;
  send->peer = sym("StreamIdx");
  send->backend = CommBackend::kCuda;
  b.add(branch->elseBody, std::move(send));
  auto end = std::make_unique<EndCoalescing>();
  end->id = 45;
  b.add(branch->elseBody, std::move(end));
  auto w = std::make_unique<Wait>();
  w->id = 45;
  b.add(branch->elseBody, std::move(w));
  b.add(std::move(branch));
  const std::string T0 = "T0_g_float[iS0{i2}] (DeviceMesh{0 1 2 3})", T5 = "T5_l_float[iS1{i2}]";
  checkGolden(b.p, header(T0, "") +
                       "  IF Manual ( StreamIdx == deviceIdx.x ):\n"
                       "    " + T5 + "\n       = Set( " + T0 + ", cache_op=Streaming )\n"
                       "  ELSE:\n"
                       "    StartCoalescing\n"
                       "    P2PCommunication 43 (type=recv, buffer=" + T5 + ", peer=StreamIdx, backend=NCCL)\n"
                       "    P2PCommunication 44 (type=send, buffer=" + T0 + ", peer=StreamIdx, backend=CUDA)\n"
                       "    EndCoalescing 45\n"
                       "    Wait Communication 45\n" + kFooter);
}

TEST(HostIrText, Communications) {
  Builder b;
  auto* in = b.tv(2, {b.id(0, 4, ParallelType::kDIDx), b.id(1, sym("i0"))});
  auto* out = b.tv(3, {b.id(2, 4), b.id(3, sym("i0"))});
  in->setDeviceMesh(DeviceMesh({0, 1, 2, 3}, {2, 2}));
  auto ag = std::make_unique<Communication>();
  ag->id = 41;
  ag->team = {0, 1, 2, 3};
  ag->input = in;
  ag->output = out;
  b.add(std::move(ag));
  auto bc = std::make_unique<Communication>();
  bc->id = 42;
  bc->type = CommunicationType::kBroadcast;
  bc->team = {0, 1};
  bc->root = sym("StreamIdx");
  bc->input = in;
  bc->output = out;
  bc->backend = CommBackend::kUcc;
  b.add(std::move(bc));
  auto rs = std::make_unique<Communication>();
  rs->id = 7;
  rs->type = CommunicationType::kReduceScatter;
  rs->team = {0, 1, 2, 3};
  rs->redOp = ReductionOpType::kMax;
  rs->input = in;
  rs->output = out;
  b.add(std::move(rs));
  auto w = std::make_unique<Wait>();
  w->id = 41;
  b.add(std::move(w));
  const std::string IN = "T2_g_float[ideviceIdx.x0{4}, iS1{i0}] (DeviceMesh{{0 1} {2 3}})",
                    OUT = "T3_g_float[iS2{4}, iS3{i0}]";
  std::string body = "  Communication 41 (type=Allgather, team=(0 1 2 3), input=" + IN + ", output=" + OUT +
                     ", backend=NCCL)\n"
                     "  Communication 42 (type=Broadcast, team=(0 1), root=StreamIdx, input=" + IN + ", output=" + OUT +
                     ", backend=UCC)\n"
                     "  Communication 7 (type=ReduceScatter, team=(0 1 2 3), red_op=max, input=" + IN + ", output=" +
                     OUT + ", backend=NCCL)\n";
  checkGolden(b.p, header("", "") + body + "  Wait Communication 41\n" + kFooter);
  checkGolden(b.p, header("", "") + body + "  Wait(Communication 41)\n" + kFooter, HostIrDialect::kModern);
}

TEST(HostIrText, AllreduceWithoutRedOpDefaultsToAdd) {
  std::string text = header("", "") +
                     "  Communication 1 (type=Allreduce, team=(0 1), input=T0_g_float[iS0{8}], "
                     "output=T1_g_float[iS1{8}], backend=NCCL)\n" + kFooter;
  HostProgram p = parseHostProgram(text);
  const auto* c = p.body()[0]->as<Communication>();
  ASSERT_TRUE(c->redOp.has_value());
  EXPECT_EQ(*c->redOp, ReductionOpType::kAdd);
  EXPECT_THAT(print(p), HasSubstr("red_op=add"));
}

// Every fusion op, in nvFuser's multi-line form.
TEST(HostIrText, FusionOps) {
  Builder b;
  auto* a = b.tv(1, {b.id(0, sym("m")), b.id(1, sym("k"))});
  auto* w = b.tv(2, {b.id(2, sym("k")), b.id(3, sym("n"))});
  auto* wl = b.tv(3, {b.id(4, sym("n")), b.id(5, sym("k"))});
  auto* bias = b.tv(4, {b.id(6, sym("n"))});
  auto* mm = b.tv(5, {b.id(7, sym("m")), b.id(8, sym("n")), b.id(9, sym("k"), ParallelType::kSerial, IterType::kReduction)});
  auto* lin = b.tv(6, {b.id(10, sym("m")), b.id(11, sym("n")), b.id(12, sym("k"), ParallelType::kSerial, IterType::kReduction)});
  auto* sum = b.tv(7, {b.id(13, sym("m")), b.id(14, sym("k"), ParallelType::kSerial, IterType::kReduction)});
  auto* bc = b.tv(8, {b.id(15, 1, ParallelType::kSerial, IterType::kBroadcast), b.id(16, sym("m")), b.id(17, sym("k"))});
  auto* sq = b.tv(9, {b.id(18, sym("m")), b.id(19, sym("k"))});
  auto* tr = b.tv(10, {b.id(20, sym("k")), b.id(21, sym("m"))});
  auto* sq2 = b.tv(11, {b.id(22, 8), b.id(23, 8)});
  auto* tr2 = b.tv(12, {b.id(24, 8), b.id(25, 8)});
  auto* view = b.tv(13, {b.id(26, bin(ScalarOp::kMul, sym("m"), sym("k")))});
  auto* add = b.tv(14, {b.id(27, sym("m")), b.id(28, sym("k"))});
  auto* g = b.tv(15, {b.id(29, sym("m")), b.id(30, sym("k"))});
  b.p.inputs() = {a, w, wl, bias};
  auto op = [&](OpType t, std::vector<TensorView*> ins, TensorView* out) {
    auto h = std::make_unique<HostOp>();
    h->op = b.f.newExpr(t, std::move(ins), {out});
    Expr* e = h->op;
    b.add(std::move(h));
    return e;
  };
  op(OpType::kMatmul, {a, w}, mm);
  op(OpType::kLinear, {a, wl}, lin);
  op(OpType::kLinear, {a, wl, bias}, lin);
  op(OpType::kReduction, {a}, sum)->reductionOp = ReductionOpType::kMax;
  op(OpType::kBroadcast, {a}, bc)->broadcastFlags = {true, false, false};
  op(OpType::kSqueeze, {bc}, sq)->squeezeFlags = {true, false, false};
  op(OpType::kPermute, {a}, tr)->permutation = {1, 0};     // inferable from the extents
  op(OpType::kPermute, {sq2}, tr2)->permutation = {1, 0};  // [8, 8]: not inferable
  op(OpType::kReshape, {a}, view);
  op(OpType::kBinary, {a, sq}, add)->binaryOp = BinaryOpType::kSub;
  op(OpType::kUnary, {add}, g)->unaryOp = UnaryOpType::kGelu;
  const std::string A = "T1_g_float[iS0{m}, iS1{k}]", W = "T2_g_float[iS2{k}, iS3{n}]", WL = "T3_g_float[iS4{n}, iS5{k}]",
                    BIAS = "T4_g_float[iS6{n}]", LIN = "T6_g_float[iS10{m}, iS11{n}, rS12{k}]",
                    BC = "T8_g_float[bS15{1}, iS16{m}, iS17{k}]", SQ = "T9_g_float[iS18{m}, iS19{k}]",
                    ADD = "T14_g_float[iS27{m}, iS28{k}]";
  std::string golden = header(A + ", " + W + ", " + WL + ", " + BIAS, "") +
                       "  T5_g_float[iS7{m}, iS8{n}, rS9{k}]\n     = matmul(" + A + ",\n              " + W + ")\n" +
                       "  " + LIN + "\n     = linear(" + A + ",\n              " + WL + " )\n" +
                       "  " + LIN + "\n     = linear(" + A + ",\n              " + WL + ",\n              " + BIAS + " )\n" +
                       "  T7_g_float[iS13{m}, rS14{k}]\n     = reduction( " + A +
                       ", op = max, initial value = float(0), allreduce = false )\n" +
                       "  " + BC + "\n     = broadcast( " + A + ", flags = {true, false, false} )\n" +
                       "  " + SQ + "\n     = squeeze( " + BC + ", flags = {true, false, false} )\n" +
                       "  T10_g_float[iS20{k}, iS21{m}]\n     = Set.Permute( " + A + ", cache_op=Streaming )\n" +
                       "  T12_g_float[iS24{8}, iS25{8}]\n     = Set.Permute( T11_g_float[iS22{8}, iS23{8}], "
                       "cache_op=Streaming, perm={1, 0} )\n" +
                       "  T13_g_float[iS26{( m * k )}]\n     = view( " + A + " )\n" +
                       "  " + ADD + "\n     = " + A + "\n     - " + SQ + ";\n" +
                       "  T15_g_float[iS29{m}, iS30{k}]\n     = gelu(" + ADD + ");\n" + kFooter;
  checkGolden(b.p, golden);
}

TEST(HostIrText, PostOnStreamAndHostUnit) {
  Builder b;
  auto* x = b.tv(1, {b.id(0, sym("i2"))});
  auto* y = b.tv(2, {b.id(1, 1, ParallelType::kSerial, IterType::kBroadcast), b.id(2, sym("i2"))});
  b.p.inputs().push_back(x);
  b.p.outputs().push_back(y);
  auto post = std::make_unique<PostOnStream>();
  post->hostUnit = 0;
  post->inputs = {x};
  post->outputs = {y};
  b.add(std::move(post));
  HostUnit unit;
  unit.fusion = std::make_unique<Fusion>();
  Fusion& k = *unit.fusion;
  auto* kin = k.newTensor({k.newIterDomain(sym("i2"), IterType::kIteration, ParallelType::kSerial, false, 0)},
                          DataType::kFloat, MemoryType::kGlobal, 1);
  auto* kout = k.newTensor({k.newIterDomain(1, IterType::kBroadcast, ParallelType::kSerial, false, 1),
                            k.newIterDomain(sym("i2"), IterType::kIteration, ParallelType::kSerial, false, 2)},
                           DataType::kFloat, MemoryType::kGlobal, 2);
  k.addInput(kin);
  k.addOutput(kout);
  k.newExpr(OpType::kBroadcast, {kin}, {kout})->broadcastFlags = {true, false};
  b.p.hostUnits().emplace(0, std::move(unit));
  const std::string X = "T1_g_float[iS0{i2}]", Y = "T2_g_float[bS1{1}, iS2{i2}]";
  checkGolden(b.p, header(X, Y) + "  PostOnStream (HostUnit0, Inputs:{" + X + ", }, Outputs:{" + Y + ", })\n\n" +
                       "HostUnit0: Inputs={" + X + ", } -> Outputs={" + Y + ", }Inputs:\n  " + X + "\nOutputs:\n  " + Y +
                       "\n\n%kernel {\n" + Y + "\n   = broadcast( " + X + ", flags = {true, false} )\n} // %kernel\n" +
                       kFooter);
}

TEST(HostIrText, AliasesAndMeshes) {
  Builder b;
  auto* t0 = b.tv(0, {b.id(0, 8, ParallelType::kDIDy), b.id(1, 8, ParallelType::kDIDx, IterType::kIteration, true)});
  t0->setDeviceMesh(DeviceMesh({0, 1, 2, 3}, {2, 2}));
  auto* t1 = b.tv(1, {b.id(2, 8), b.id(3, 8, ParallelType::kSerial, IterType::kReduction, true)}, MemoryType::kGlobal,
                  DataType::kBFloat16);
  b.p.inputs().push_back(t0);
  b.p.outputs().push_back(t1);
  b.p.aliases().emplace_back(t1, t0);
  checkGolden(b.p, header("T0_g_float[ideviceIdx.y0{8}, ideviceIdx.x1{8}rf] (DeviceMesh{{0 1} {2 3}})",
                          "T1_g___bfloat[iS2{8}, rS3{8}rf]") +
                       "  // braid: alias T1_g___bfloat -> T0_g_float\n" + kFooter);
}

// What nvFuser's dumps contain that braid's printer never writes.
TEST(HostIrText, AcceptsDumpVariants) {
  const std::string text = R"(
      %HostIrContainer { (T0_g_float[istreamIdx0{4}, iS1{i0}]) -> (T1_g_float[istreamIdx2{4}, iS3{i0}]) :
        Stream 0x55d0c0 = GetCurrentStream()
        T1 = ALLOCATE(mem_type=global, zero_init=false)
        FOR i17 from 0 to 4:
          SetCurrentStream(Stream i17)
          Synchronize(Stream 0x55d0c0)
          T4_l_float[istreamIdx4{4}, iS5{i0}] = ShardByStream(T1, stream_index = i17)   // a comment
          T4_l_float[istreamIdx4{4}, iS5{i0}]
             =
             Set( T0_g_float[istreamIdx0{4},
                             iS1{i0}], cache_op=Streaming )
        SetCurrentStream(Stream 0x55d0c0)
        FOR i17 from 0 to 4:
            Synchronize(Stream i17)
        T5_l_float[iS6{i0}] = ALLOCATE(buffer=T5_l_float[iS6{i0}], mem_type=local, size=i0, zero_init=false, resets_to_zero=false, future_flag=(1 2))
      } // %HostIrContainer
  )";
  HostProgram p = parseHostProgram(text, "dump.hir");
  ASSERT_EQ(p.body().size(), 6u);
  EXPECT_TRUE(p.body()[0]->is<GetCurrentStream>());
  EXPECT_EQ(p.body()[0]->as<GetCurrentStream>()->stream, StreamRef::named("0x55d0c0"));
  EXPECT_EQ(p.body()[0]->loc, (SourceLoc{"dump.hir", 3, 9}));
  EXPECT_FALSE(p.body()[1]->as<Allocate>()->legacy);
  EXPECT_EQ(p.body()[1]->as<Allocate>()->tv, p.outputs()[0]);
  const auto* loop = p.body()[2]->as<ForLoop>();
  ASSERT_EQ(loop->body.size(), 4u);
  EXPECT_EQ(loop->body[3]->loc.line, 9);
  EXPECT_EQ(loop->body[3]->as<HostOp>()->op->type(), OpType::kSet);
  EXPECT_EQ(p.body()[4]->as<ForLoop>()->body.size(), 1u);  // a body indented 4 more: still one level
  EXPECT_TRUE(p.body()[5]->as<Allocate>()->legacy);
  // Reprinting and reparsing is stable.
  std::string once = print(p);
  EXPECT_EQ(print(parseHostProgram(once)), once);
}

TEST(HostIrText, ByteOrderMarkAndCrLf) {
  std::string text = "\xEF\xBB\xBF%HostIrContainer { () -> () :\r\n  StartCoalescing\r\n  Frob\r\n} // %HostIrContainer\r\n";
  try {
    parseHostProgram(text, "w.hir");
    ADD_FAILURE();
  } catch (const ParseError& e) {
    EXPECT_EQ(e.loc(), (SourceLoc{"w.hir", 3, 3}));
  }
}

TEST(HostIrText, SameNameIsSameTensorAndIdsAreShared) {
  HostProgram p = parseHostProgramFile(std::string(BRAID_SOURCE_DIR) + "/examples/stream_set_serialized.hir");
  const auto* loop = p.body()[1]->as<ForLoop>();
  EXPECT_EQ(loop->domain, p.outputs()[0]->loop()[0]);  // `FOR StreamIdx in iStreamIdx2{i0}` is T1's axis
  const auto* sel = loop->body[3]->as<AliasSelect>();
  EXPECT_EQ(sel->in, p.inputs()[0]);
  EXPECT_EQ(sel->axis, p.inputs()[0]->loop()[0]);
  const auto* set = loop->body[5]->as<HostOp>();
  EXPECT_EQ(set->op->output(0), loop->body[4]->as<AliasSelect>()->out);
  EXPECT_EQ(p.outputs()[0]->loop(), p.outputs()[0]->logical());
}

TEST(HostIrText, ScalarExpressionsKeepTheirTree) {
  for (const char* s : {"( ( i0 + 1 ) * ceilDiv(i2, 4) )", "( ( StreamIdx == deviceIdx.x ) && !( rank < 3 ) )",
                        "( i0 % numberOfStreams )", "( a || ( b != c ) )", "( ( x <= y ) >= ( x / -2 ) )"}) {
    EXPECT_EQ(parseScalar(s).str(), s);
  }
  // Precedence without parentheses.
  EXPECT_EQ(parseScalar("a + b * c == d || e && f").str(), "( ( ( a + ( b * c ) ) == d ) || ( e && f ) )");
  EXPECT_EQ(parseScalar("1 + 2").str(), "( 1 + 2 )");  // not simplified
}

TEST(HostIrText, PermutationInferredFromExtents) {
  std::string text = header("T0_g_float[iS0{a}, iS1{b}, iS2{c}]", "") +
                     "  T1_g_float[iS3{c}, iS4{a}, iS5{b}]\n     = Set.Permute( T0_g_float[iS0{a}, iS1{b}, iS2{c}], "
                     "cache_op=Streaming )\n" + kFooter;
  HostProgram p = parseHostProgram(text);
  EXPECT_EQ(p.body()[0]->as<HostOp>()->op->permutation, (std::vector<int64_t>{2, 0, 1}));
  EXPECT_EQ(print(p), text);
}

TEST(HostIrText, AssignPrintedLocations) {
  HostProgram p = parseHostProgramFile(std::string(BRAID_SOURCE_DIR) + "/examples/ag_p2p_matmul_4ranks.hir");
  assignPrintedLocations(p, "printed.hir");
  std::string text = print(p);
  HostProgram q = parseHostProgram(text, "printed.hir");
  std::vector<SourceLoc> a, b;
  forEachStmt(p.body(), [&](const Stmt& s, int) { a.push_back(s.loc); });
  forEachStmt(q.body(), [&](const Stmt& s, int) { b.push_back(s.loc); });
  EXPECT_EQ(a, b);
}

}  // namespace
}  // namespace braid
