package redis_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/checkpoint"
	"github.com/compactkit/compact/checkpoint/storetest"
	"github.com/redis/go-redis/v9"
)

// QA-23 (regression): on a Redis that evicts (maxmemory-policy allkeys-lru, the usual
// setting of a Redis run as a cache; the README's own example store is
// redis://cache:6379/0), the store's keys are evicted like any cache entry:
// every checkpoint of a session vanishes, `checkpoint verify` says
// "0 problems", `list` is empty and the next save starts over at seq 1.
// Opening a store on an evicting server should fail (or at least warn),
// naming maxmemory-policy.
func TestEvictingRedisRefused(t *testing.T) {
	srv := storetest.StartRedis(t)
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	if err := rdb.ConfigSet(ctx, "maxmemory-policy", "allkeys-lru").Err(); err != nil {
		t.Fatal(err)
	}
	spec := "redis://" + srv.Addr() + "/2"
	s, err := checkpoint.Open(ctx, spec, checkpoint.Options{})
	if err != nil {
		if !strings.Contains(err.Error(), "maxmemory-policy") {
			t.Errorf("Open failed without naming maxmemory-policy: %v", err)
		}
		return
	}
	defer s.Close()
	parent := ""
	for i := range 3 {
		c := &checkpoint.Checkpoint{Session: "s1", Task: "qa", Status: checkpoint.StatusRunning,
			Transcript: &compact.Transcript{Messages: []compact.Message{compact.UserMessage(fmt.Sprintf("step %d", i))}}}
		if err := s.Save(ctx, c, parent); err != nil {
			t.Fatal(err)
		}
		parent = c.ID
	}
	// Other users of the cache fill it past maxmemory.
	if err := rdb.ConfigSet(ctx, "maxmemory", "2mb").Err(); err != nil {
		t.Fatal(err)
	}
	junk := strings.Repeat("x", 20000)
	for i := range 300 {
		rdb.Set(ctx, fmt.Sprintf("junk%d", i), junk, 0)
	}
	s2, err := checkpoint.Open(ctx, spec, checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if _, err := s2.Latest(ctx, "s1"); err != nil {
		t.Errorf("the store opened on an evicting Redis without a word, and its checkpoints were evicted: Latest: %v", err)
	}
}

// TestFullRedisNamesTheCause (QA-23): a save refused by a full Redis
// (noeviction, maxmemory reached) says why (OOM), not only that the
// transaction was discarded.
func TestFullRedisNamesTheCause(t *testing.T) {
	srv := storetest.StartRedis(t)
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	junk := strings.Repeat("x", 20000)
	for i := range 100 {
		rdb.Set(ctx, fmt.Sprintf("junk%d", i), junk, 0)
	}
	used, err := rdb.Info(ctx, "memory").Result()
	if err != nil {
		t.Fatal(err)
	}
	var usedBytes int64
	for _, line := range strings.Split(used, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "used_memory:"); ok {
			fmt.Sscan(v, &usedBytes)
		}
	}
	if err := rdb.ConfigSet(ctx, "maxmemory", fmt.Sprint(usedBytes+200_000)).Err(); err != nil {
		t.Fatal(err)
	}
	s, err := checkpoint.Open(ctx, "redis://"+srv.Addr()+"/0", checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	parent := ""
	for i := range 200 {
		c := &checkpoint.Checkpoint{Session: "full", Task: "qa", Status: checkpoint.StatusRunning,
			Transcript: &compact.Transcript{Messages: []compact.Message{compact.UserMessage(fmt.Sprintf("step %d %s", i, junk))}}}
		err := s.Save(ctx, c, parent)
		if err != nil {
			if !strings.Contains(err.Error(), "OOM") {
				t.Errorf("a save refused by a full Redis: %v (want the OOM cause)", err)
			}
			t.Logf("save %d: %v", i, err)
			return
		}
		parent = c.ID
	}
	t.Fatal("200 saves of 20 KB fit in 200 KB")
}

// TestFullRedisStillReads (QA-23): a Redis at its maxmemory (noeviction)
// refuses writes, and every command queued in a MULTI: the checkpoints it
// holds still read (Latest, Load, History, List, Verify), and a refused
// write says the Redis is full, that maxmemory is the limit and what to do,
// not only "EXECABORT".
func TestFullRedisStillReads(t *testing.T) {
	srv := storetest.StartRedis(t, "--maxmemory-policy", "noeviction")
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	spec := "redis://" + srv.Addr() + "/0"
	s, err := checkpoint.Open(ctx, spec, checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	junk := strings.Repeat("y", 20000)
	var msgs []compact.Message
	var saved []string
	save := func() error {
		msgs = append(msgs, compact.UserMessage(fmt.Sprintf("step %d %s", len(msgs), junk)))
		c := &checkpoint.Checkpoint{Session: "full", Task: "qa", Status: checkpoint.StatusRunning,
			Transcript: &compact.Transcript{Messages: append([]compact.Message(nil), msgs...)}}
		parent := ""
		if len(saved) > 0 {
			parent = saved[len(saved)-1]
		}
		if err := s.Save(ctx, c, parent); err != nil {
			return err
		}
		saved = append(saved, c.ID)
		return nil
	}
	for range 3 {
		if err := save(); err != nil {
			t.Fatal(err)
		}
	}
	// Full: maxmemory below what the server uses now.
	info, err := rdb.Info(ctx, "memory").Result()
	if err != nil {
		t.Fatal(err)
	}
	var used int64
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "used_memory:"); ok {
			fmt.Sscan(v, &used)
		}
	}
	if err := rdb.ConfigSet(ctx, "maxmemory", fmt.Sprint(used-10_000)).Err(); err != nil {
		t.Fatal(err)
	}
	serr := save()
	if serr == nil {
		t.Fatal("a save on a full Redis succeeded")
	}
	for _, want := range []string{"is full", "maxmemory", "raise maxmemory", "OOM"} {
		if !strings.Contains(serr.Error(), want) {
			t.Errorf("the refused save says %q, without %q", serr, want)
		}
	}
	fresh, err := checkpoint.Open(ctx, spec, checkpoint.Options{})
	if err != nil {
		t.Fatalf("open a full Redis: %v", err)
	}
	defer fresh.Close()
	if c, err := fresh.Latest(ctx, "full"); err != nil || c.ID != saved[len(saved)-1] {
		t.Errorf("Latest on a full Redis: %v", err)
	}
	if _, err := fresh.Load(ctx, "full", saved[0]); err != nil {
		t.Errorf("Load on a full Redis: %v", err)
	}
	if h, err := fresh.History(ctx, "full"); err != nil || len(h) != len(saved) {
		t.Errorf("History on a full Redis: %d, %v", len(h), err)
	}
	if infos, err := fresh.List(ctx, checkpoint.Filter{}); err != nil || len(infos) != 1 {
		t.Errorf("List on a full Redis: %+v, %v", infos, err)
	}
	if _, probs, err := checkpoint.Verify(ctx, fresh, "full"); err != nil || len(probs) != 0 {
		t.Errorf("Verify on a full Redis: %+v, %v", probs, err)
	}
	c := &checkpoint.Checkpoint{Session: "other", Task: "qa", Status: checkpoint.StatusRunning}
	if err := fresh.Save(ctx, c, ""); err == nil || !strings.Contains(err.Error(), "is full") {
		t.Errorf("a new session's save on a full Redis: %v", err)
	}
	if err := fresh.Delete(ctx, "full"); err != nil {
		t.Errorf("Delete on a full Redis (what frees it): %v", err)
	}
}

// TestStartOver (QA-31): a session whose first frame is damaged has
// nothing to recover; StartOver keeps the log under another key and the
// next save starts the session over.
func TestStartOver(t *testing.T) {
	srv := storetest.StartRedis(t)
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	s, err := checkpoint.Open(ctx, "redis://"+srv.Addr()+"/0", checkpoint.Options{Prefix: "so"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	parent := ""
	var msgs []compact.Message
	for i := range 3 {
		// The first message is shared by every checkpoint.
		msgs = append(msgs, compact.UserMessage(fmt.Sprintf("step %d", i)))
		c := &checkpoint.Checkpoint{Session: "s1", Task: "qa", Status: checkpoint.StatusRunning,
			Transcript: &compact.Transcript{Messages: append([]compact.Message(nil), msgs...)}}
		if err := s.Save(ctx, c, parent); err != nil {
			t.Fatal(err)
		}
		parent = c.ID
	}
	if _, err := checkpoint.StartOver(ctx, s, "s1"); !errors.Is(err, checkpoint.ErrInvalid) {
		t.Fatalf("StartOver of a readable session: %v", err)
	}
	first, err := rdb.LIndex(ctx, "so:{s1}:log", 0).Bytes()
	if err != nil {
		t.Fatal(err)
	}
	first[len(first)/2] ^= 0x5a
	rdb.LSet(ctx, "so:{s1}:log", 0, first)
	fresh, err := checkpoint.Open(ctx, "redis://"+srv.Addr()+"/0", checkpoint.Options{Prefix: "so"})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if _, err := fresh.Latest(ctx, "s1"); err == nil || strings.Contains(err.Error(), "not stored") || !strings.Contains(err.Error(), "checksum") {
		t.Errorf("Latest of the damaged session: %v (want the damage named)", err)
	}
	if _, err := checkpoint.Recover(ctx, fresh, "s1"); err == nil {
		t.Skip("Recover salvaged a checkpoint: the damage did not reach every checkpoint")
	} else {
		t.Logf("Recover: %v", err)
	}
	where, err := checkpoint.StartOver(ctx, fresh, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := rdb.LLen(ctx, where).Result(); n == 0 {
		t.Errorf("the damaged log is not kept at %s", where)
	}
	c := &checkpoint.Checkpoint{Session: "s1", Task: "again", Status: checkpoint.StatusRunning}
	if err := fresh.Save(ctx, c, ""); err != nil || c.Seq != 1 {
		t.Fatalf("save after starting over: %v (seq %d)", err, c.Seq)
	}
}
