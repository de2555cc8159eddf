package checkpoint_test

import (
	"testing"

	"github.com/compactkit/compact/checkpoint/storetest"
)

func TestFileStoreConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Backend { return newFileBackend(t) })
}

func TestRedisStoreConformance(t *testing.T) {
	srv := startRedis(t)
	storetest.Run(t, func(t *testing.T) storetest.Backend { return newRedisBackend(t, srv) })
}
