package sample

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// The session's project: invoicer, a small Python CLI that prints a
// monthly invoice report (net, VAT and gross per country) from the billing
// export's CSV. Its bug: amounts are floats parsed with the thousands
// separator stripped, so the export's new locale-formatted amounts
// ("1.234,50") read as thousandths, a million-sized one crashes the
// report, and VAT sums drift by a cent against finance's per-line rounding.

// vatRates are the project's VAT rates, in percent.
var vatRates = map[string]int{"DE": 19, "FR": 20, "IT": 22, "ES": 21, "NL": 21, "IE": 23, "US": 0}

// commaLocale says which countries' amounts the new export writes with a
// decimal comma.
var commaLocale = map[string]bool{"DE": true, "FR": true, "IT": true, "ES": true, "NL": true}

var customerNames = map[string][]string{
	"DE": {"Brotwerk GmbH", "Kaffeerösterei Lindner", "Hafenlogistik Nord GmbH", "Tischlerei Krämer"},
	"FR": {"Atelier Mercier", "Boulangerie Caron SARL", "Transports Giraud"},
	"IT": {"Ferramenta Bassi", "Studio Ricci Srl", "Oleificio Greco"},
	"ES": {"Talleres Ortega SL", "Cerámica Vidal"},
	"NL": {"Fietsenmakerij de Vries", "Bakkerij Jansen BV"},
	"IE": {"Quinn & Byrne Ltd", "Harbour Coffee Ltd"},
	"US": {"Acme Tooling Inc", "Northwind Traders", "Bluebird Analytics LLC", "Cobalt Labs"},
}

var countries = []string{"DE", "FR", "IT", "ES", "NL", "IE", "US"}

// row is one invoice line of the export.
type row struct {
	invoice, customer, country string
	cents                      int64 // net amount in cents
	text                       string
}

// month is one month of the export.
type month struct {
	name string // "2025-03"
	rows []row
}

// project holds the generated data the story's outputs are computed from.
type project struct {
	months     []month // January, February, March
	de         month   // March from the German entity (semicolons, BOM)
	stripeKey  string
	dbPassword string
	bigRow     row // March's million-sized EU amount that crashes the old report
}

func newProject(r *rand.Rand) *project {
	p := &project{
		stripeKey:  "sk_test_51" + randString(r, alnum, 30),
		dbPassword: randString(r, alnum, 20),
	}
	for i, name := range []string{"2025-01", "2025-02", "2025-03"} {
		m := month{name: name}
		n := 9 + r.IntN(5)
		for j := range n {
			// The export job switched to each customer's locale in the
			// middle of February.
			locale := i == 2 || i == 1 && j >= n/2
			c := countries[r.IntN(len(countries))]
			cents := int64(2000 + r.IntN(400000))
			if r.IntN(4) == 0 {
				cents = int64(500 + r.IntN(5000))
			}
			m.rows = append(m.rows, newRow(r, name, j+1, c, cents, locale))
		}
		if i == 2 {
			c := []string{"DE", "FR", "IT", "NL"}[r.IntN(4)]
			big := newRow(r, name, n+1, c, int64(100_000_000+r.IntN(90_000_000)), true)
			p.bigRow = big
			at := 3 + r.IntN(len(m.rows)-3)
			m.rows = append(m.rows[:at], append([]row{big}, m.rows[at:]...)...)
		}
		p.months = append(p.months, m)
	}
	p.de = month{name: "2025-03"}
	for j := range 4 + r.IntN(3) {
		p.de.rows = append(p.de.rows, newRow(r, "2025-03", 1001+j, "DE", int64(5000+r.IntN(300000)), true))
	}
	return p
}

func newRow(r *rand.Rand, month string, n int, country string, cents int64, locale bool) row {
	names := customerNames[country]
	return row{
		invoice:  fmt.Sprintf("INV-%s-%04d", month, n),
		customer: names[r.IntN(len(names))],
		country:  country,
		cents:    cents,
		text:     formatCents(cents, locale && commaLocale[country]),
	}
}

// formatCents writes an amount as the export does: "1,234.50", or
// "1.234,50" in a decimal-comma locale.
func formatCents(cents int64, comma bool) string {
	s := groupThousands(strconv.FormatInt(cents/100, 10)) + fmt.Sprintf(".%02d", cents%100)
	if comma {
		s = strings.NewReplacer(",", ".", ".", ",").Replace(s)
	}
	return s
}

func groupThousands(digits string) string {
	var b strings.Builder
	for i, d := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(d)
	}
	return b.String()
}

// csv renders a month as the export writes it.
func (m month) csv(sep string, bom bool) string {
	var b strings.Builder
	if bom {
		b.WriteString("\ufeff")
	}
	b.WriteString(strings.Join([]string{"invoice", "customer", "country", "net"}, sep) + "\n")
	for _, r := range m.rows {
		amount := r.text
		if sep == "," && strings.Contains(amount, ",") {
			amount = `"` + amount + `"`
		}
		fmt.Fprintf(&b, "%s%s%s%s%s%s%s\n", r.invoice, sep, r.customer, sep, r.country, sep, amount)
	}
	return b.String()
}

// reportFixed is what the fixed report prints: Decimal amounts, VAT rounded
// half up per line.
func (m month) reportFixed() string {
	net, vat := map[string]int64{}, map[string]int64{}
	for _, r := range m.rows {
		net[r.country] += r.cents
		vat[r.country] += (r.cents*int64(vatRates[r.country]) + 50) / 100
	}
	t := newTable(m.name)
	var gn, gv int64
	for _, c := range sortedKeys(net) {
		t.line(c, cents(net[c]), cents(vat[c]), cents(net[c]+vat[c]))
		gn += net[c]
		gv += vat[c]
	}
	t.line("total", cents(gn), cents(gv), cents(gn+gv))
	return t.String()
}

// reportFloat is what the original report prints for a month whose amounts
// it can parse: floats summed in file order, formatted with Python's
// "{:,.2f}" (Go's float formatting rounds the same exact binary value the
// same way).
func (m month) reportFloat() string {
	net, vat := map[string]float64{}, map[string]float64{}
	for _, r := range m.rows {
		v, err := strconv.ParseFloat(strings.ReplaceAll(r.text, ",", ""), 64)
		if err != nil {
			panic(err)
		}
		net[r.country] += v
		vat[r.country] += v * (float64(vatRates[r.country]) / 100)
	}
	t := newTable(m.name)
	var gn, gv float64
	for _, c := range sortedKeys(net) {
		t.line(c, floats(net[c]), floats(vat[c]), floats(net[c]+vat[c]))
		gn += net[c]
		gv += vat[c]
	}
	t.line("total", floats(gn), floats(gv), floats(gn+gv))
	return t.String()
}

type table struct{ strings.Builder }

func newTable(month string) *table {
	t := &table{}
	fmt.Fprintf(t, "Invoice report %s\n\n%-8s%14s%12s%14s\n", month, "country", "net", "vat", "gross")
	return t
}

func (t *table) line(c, net, vat, gross string) {
	fmt.Fprintf(t, "%-8s%14s%12s%14s\n", c, net, vat, gross)
}

func cents(c int64) string { return formatCents(c, false) }

func floats(v float64) string {
	s := strconv.FormatFloat(v, 'f', 2, 64)
	whole, frac, _ := strings.Cut(s, ".")
	return groupThousands(whole) + "." + frac
}

// sortedKeys returns the country codes of m in Python's sorted order.
func sortedKeys[V any](m map[string]V) []string {
	keys := slices.Collect(maps.Keys(m))
	slices.Sort(keys)
	return keys
}

const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

func randString(r *rand.Rand, alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}
