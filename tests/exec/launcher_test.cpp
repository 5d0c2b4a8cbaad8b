// The launcher's port handling (exec/launcher.h): whether a port is taken, read from a failed
// listen's message or probed. No libtorch needed.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "exec/launcher.h"

namespace braid::exec {
namespace {

TEST(Launcher, PortInUseReadsTheMessage) {
  int port = findFreePort();
  EXPECT_TRUE(portInUse(port, "failed to listen ... code: -98, name: EADDRINUSE, message: address already in use"));
  EXPECT_TRUE(portInUse(port, "bind to [::]:29500 (errno: 98 - Address already in use)."));
}

TEST(Launcher, PortInUseProbesWhenTheMessageDoesNotSay) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(fd, 4), 0);
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len), 0);
  const int held = ntohs(a.sin_port);
  EXPECT_TRUE(portInUse(held, "the server socket has failed to listen"));
  ::close(fd);
  EXPECT_FALSE(portInUse(findFreePort(), "the server socket has failed to listen"));
}

}  // namespace
}  // namespace braid::exec
