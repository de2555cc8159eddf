package tokens

import (
	"math"
	"sync"
)

// Calibration: the estimator aims at o200k's counts, and a provider's own
// tokenizer counts differently (Claude's, Gemini's, Llama's vocabularies
// are not o200k's). When a provider reports the real prompt tokens of a
// request, Calibrate moves that model's correction factor towards
// reported/estimated, so later estimates for the model converge to the
// provider's counts.
//
// The factor is a moving average over the last calibrationWindow reports
// (the first report takes effect at once), and each report's ratio is
// clamped to [minFactor, maxFactor]: one absurd usage figure cannot throw
// the counts off by more than that, and a run of them is forgotten after
// calibrationWindow sound ones.
const (
	calibrationWindow = 16
	minFactor         = 0.25
	maxFactor         = 4
)

type calibrationState struct {
	factor  float64
	samples int
}

var calibrations = struct {
	sync.Mutex
	byModel map[string]calibrationState
}{byModel: map[string]calibrationState{}}

// calibrationKey groups names that reach the same table entry
// ("claude-sonnet-4-5-20250929" and "claude-sonnet-4.5").
func calibrationKey(model string) string {
	m, ok := LookupModel(model)
	if !ok {
		return normalizeModel(model)
	}
	return normalizeModel(m.Name)
}

// Calibrate records that a provider counted reported prompt tokens where
// this package estimated estimated (the count a Counter for model gave for
// the same prompt). It affects models counted by the estimator only; exact
// encodings are left alone. Non-positive figures are ignored.
func Calibrate(model string, reported, estimated int) {
	if m, ok := LookupModel(model); ok && !m.Estimated {
		return
	}
	calibrate(calibrationKey(model), reported, estimated)
}

func calibrate(key string, reported, estimated int) {
	if reported <= 0 || estimated <= 0 {
		return
	}
	calibrations.Lock()
	defer calibrations.Unlock()
	st, ok := calibrations.byModel[key]
	if !ok {
		st.factor = 1
	}
	// estimated was scaled by the factor in force; the raw estimate is
	// estimated/factor, so the factor that would have been right is:
	target := st.factor * float64(reported) / float64(estimated)
	target = math.Min(maxFactor, math.Max(minFactor, target))
	st.samples = min(st.samples+1, calibrationWindow)
	st.factor += (target - st.factor) / float64(st.samples)
	calibrations.byModel[key] = st
}

// CalibrationFactor returns the factor estimates for model are multiplied
// by: 1 until Calibrate has seen a report for it.
func CalibrationFactor(model string) float64 {
	return calibrationFactor(calibrationKey(model))
}

func calibrationFactor(key string) float64 {
	calibrations.Lock()
	defer calibrations.Unlock()
	if st, ok := calibrations.byModel[key]; ok {
		return st.factor
	}
	return 1
}

// ResetCalibration forgets what Calibrate learned for model.
func ResetCalibration(model string) {
	key := calibrationKey(model)
	calibrations.Lock()
	defer calibrations.Unlock()
	delete(calibrations.byModel, key)
}
