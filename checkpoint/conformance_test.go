package checkpoint_test

import (
	"testing"

	"github.com/compactkit/compact/checkpoint/storetest"
)

func TestFileStoreConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Backend { return newFileBackend(t) })
}
