package tokens

import (
	"encoding/base64"
	"image"
	_ "image/gif" // registers GIF for DecodeConfig
	_ "image/jpeg"
	_ "image/png"
	"math"
	"strings"

	"github.com/compactkit/compact"
)

// Image prices, per provider, from their published rules. Dimensions come
// from the header of inline image data; when they are unknown (an image by
// URL, a format the standard library cannot read) the price is that of a
// typical 1024×1024 screenshot.
const (
	unknownImageOpenAI    = 765  // 85 + 170 × 4 tiles
	unknownImageAnthropic = 1398 // 1024×1024 / 750
	unknownImageGoogle    = 258
)

// imageTokens prices one image for provider. Only the first
// imageHeadBytes of inline data are read, the part the cache hashes.
func imageTokens(img *compact.Image, provider string) int {
	w, h, ok := imageSize(img)
	switch provider {
	case "anthropic":
		if !ok {
			return unknownImageAnthropic
		}
		// Images are scaled to fit 1568 px on the long edge and about
		// 1.15 megapixels; they cost width × height / 750.
		w, h = fitLongEdge(w, h, 1568)
		if px := float64(w) * float64(h); px > 1_150_000 {
			s := math.Sqrt(1_150_000 / px)
			w, h = int(float64(w)*s), int(float64(h)*s)
		}
		return max(1, int(math.Ceil(float64(w)*float64(h)/750)))
	case "google":
		if !ok || w <= 384 && h <= 384 {
			return unknownImageGoogle
		}
		// Larger images are cut into 768×768 tiles of 258 tokens each.
		return 258 * ceilDiv(w, 768) * ceilDiv(h, 768)
	default:
		if !ok {
			return unknownImageOpenAI
		}
		// OpenAI high detail: fit 2048×2048, shortest side down to 768,
		// then 170 per 512×512 tile plus 85.
		w, h = fitLongEdge(w, h, 2048)
		if short := min(w, h); short > 768 {
			w, h = w*768/short, h*768/short
		}
		return 85 + 170*ceilDiv(w, 512)*ceilDiv(h, 512)
	}
}

func fitLongEdge(w, h, limit int) (int, int) {
	if long := max(w, h); long > limit {
		return w * limit / long, h * limit / long
	}
	return w, h
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// imageSize reads the dimensions from the head of inline data (Data, or a
// data: URL).
func imageSize(img *compact.Image) (w, h int, ok bool) {
	src := img.Data
	if src == "" {
		src = img.URL
	}
	src = src[:min(len(src), imageHeadBytes)]
	if img.Data == "" {
		i := strings.Index(src, ";base64,")
		if !strings.HasPrefix(src, "data:") || i < 0 {
			return 0, 0, false
		}
		src = src[i+len(";base64,"):]
	}
	src = src[:len(src)/4*4]
	cfg, _, err := image.DecodeConfig(base64.NewDecoder(base64.StdEncoding, strings.NewReader(src)))
	if err != nil || cfg.Width <= 0 || cfg.Height <= 0 {
		return 0, 0, false
	}
	return cfg.Width, cfg.Height, true
}
