package storetest

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// RequireRedis is the environment variable that turns a missing
// redis-server from a skip into a failure (CI sets it).
const RequireRedis = "COMPACT_REQUIRE_REDIS"

// RedisServer is a redis-server a test starts on a free loopback port, in a
// temporary directory, with an append-only file so a restart keeps its
// data.
type RedisServer struct {
	t    testing.TB
	dir  string
	port int
	args []string
	cmd  *exec.Cmd
}

// StartRedis starts a redis-server for the test and stops it at its end;
// args are more of redis-server's options ("--requirepass", "pw").
// Without redis-server on PATH the test is skipped, or fails when
// COMPACT_REQUIRE_REDIS is set.
func StartRedis(t testing.TB, args ...string) *RedisServer {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv(RequireRedis) != "" {
			t.Fatalf("redis-server is not on PATH and %s is set", RequireRedis)
		}
		t.Skipf("redis-server is not on PATH; install it (apt-get install redis-server) or set %s=1 to make this a failure", RequireRedis)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	r := &RedisServer{t: t, dir: t.TempDir(), port: port, args: args}
	r.Start()
	t.Cleanup(r.Stop)
	return r
}

// Addr is the server's host:port.
func (r *RedisServer) Addr() string { return "127.0.0.1:" + strconv.Itoa(r.port) }

// Start starts the server and waits until it answers PING.
func (r *RedisServer) Start() {
	r.t.Helper()
	r.cmd = exec.Command("redis-server", append([]string{
		"--port", strconv.Itoa(r.port), "--bind", "127.0.0.1", "--dir", r.dir,
		"--save", "", "--appendonly", "yes", "--appendfsync", "everysec",
		"--daemonize", "no", "--logfile", filepath.Join(r.dir, "redis.log")}, r.args...)...)
	if err := r.cmd.Start(); err != nil {
		r.t.Fatalf("start redis-server: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !r.answers() {
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(r.dir, "redis.log"))
			r.t.Fatalf("redis-server on %s did not answer\n%s", r.Addr(), log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (r *RedisServer) answers() bool {
	c, err := net.DialTimeout("tcp", r.Addr(), 200*time.Millisecond)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(500 * time.Millisecond))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	// A server that requires a password answers, asking for it.
	return err == nil && (line == "+PONG\r\n" || strings.HasPrefix(line, "-NOAUTH"))
}

// Stop shuts the server down (SIGTERM: it writes its append-only file).
func (r *RedisServer) Stop() {
	if r.cmd == nil || r.cmd.Process == nil {
		return
	}
	r.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { r.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		r.cmd.Process.Kill()
		<-done
	}
	r.cmd = nil
}
