package serve_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/compactkit/compact/checkpoint"
	ckredis "github.com/compactkit/compact/checkpoint/redis"
	"github.com/compactkit/compact/checkpoint/storetest"
	"github.com/compactkit/compact/redact"
	"github.com/compactkit/compact/serve"
	"github.com/compactkit/compact/serve/servetest"
	"github.com/redis/go-redis/v9"
)

// Two proxies share a Redis store: the one that did not compact a
// conversation forwards its next request with the other's prefix, without
// a summarizer call; what Redis holds has neither the clients' keys nor
// the secrets the handoff summarized.
func TestPrefixSharedThroughRedis(t *testing.T) {
	srv := storetest.StartRedis(t)
	ctx := context.Background()
	open := func() checkpoint.Store {
		red, err := redact.New(redact.Config{})
		if err != nil {
			t.Fatal(err)
		}
		s, err := ckredis.Open(ctx, "redis://"+srv.Addr()+"/0", checkpoint.Options{Redactor: red})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	a := newRig(t, func(c *serve.Config) { c.Store = open() })
	b := newRig(t, func(c *serve.Config) { c.Store = open() })
	api := servetest.Messages
	turns := conversation(70, 8)
	turns[12].text += "\nexport AWS_ACCESS_KEY_ID=" + awsKeyID + "\n"
	header := map[string]string{"x-api-key": anthropicKey, "anthropic-version": "2023-06-01"}
	a.post(t, apiPaths[api], request(api, claudeModel, turns[:120], true), header)
	if a.summary.calls.Load() != 1 {
		t.Fatal("the first proxy did not compact")
	}
	first, _ := split(t, api, a.up.Last().Body)
	b.post(t, apiPaths[api], request(api, claudeModel, turns[:122], true), header)
	if b.summary.calls.Load() != 0 {
		t.Fatal("the second proxy compacted again instead of reusing the stored prefix")
	}
	second, _ := split(t, api, b.up.Last().Body)
	for i := range first[:len(first)-1] {
		if !bytes.Equal(normalize(api, first[i]), normalize(api, second[i])) {
			t.Fatalf("prefix element %d differs between the proxies", i)
		}
	}
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	var all bytes.Buffer
	keys, err := rdb.Keys(ctx, "*").Result()
	if err != nil || len(keys) == 0 {
		t.Fatalf("redis keys: %v %v", keys, err)
	}
	for _, k := range keys {
		switch typ, _ := rdb.Type(ctx, k).Result(); typ {
		case "string":
			v, _ := rdb.Get(ctx, k).Bytes()
			all.Write(v)
		case "list":
			vs, _ := rdb.LRange(ctx, k, 0, -1).Result()
			all.WriteString(strings.Join(vs, ""))
		case "hash":
			m, _ := rdb.HGetAll(ctx, k).Result()
			for _, v := range m {
				all.WriteString(v)
			}
		case "zset":
			m, _ := rdb.ZRange(ctx, k, 0, -1).Result()
			all.WriteString(strings.Join(m, ""))
		}
	}
	if !bytes.Contains(all.Bytes(), []byte("handler_")) {
		t.Fatalf("the dump holds none of the conversation: not a plain dump (%d bytes)", all.Len())
	}
	for _, secret := range []string{anthropicKey, awsKeyID, "Q7mZ2xK9vL3pT8nW4rY6"} {
		if bytes.Contains(all.Bytes(), []byte(secret)) {
			t.Errorf("redis holds %.12s…", secret)
		}
	}
}
