package report

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestCostOutputs(t *testing.T) {
	v := func(f float64) *float64 { return &f }
	pg := Cost{StoreCPUUsPerJob: v(15.9), ClientCPUUsPerJob: v(7.5), WALBytesPerJob: v(1020)}
	tests := []struct {
		name     string
		r        Report
		rows     [][2]string
		jsonKeys []string
	}{
		{"postgres with both references", Report{Cost: pg,
			Ceiling: &Reference{Cost: Cost{StoreCPUUsPerJob: v(17.94), ClientCPUUsPerJob: v(2.6), WALBytesPerJob: v(1024)}},
			Floor:   &Reference{Cost: Cost{StoreCPUUsPerJob: v(12.5), ClientCPUUsPerJob: v(0.1), WALBytesPerJob: v(511)}}},
			[][2]string{
				{"store CPU µs/job", "15.90 (ceiling 17.94, floor 12.50)"},
				{"client CPU µs/job", "7.50 (ceiling 2.60, floor 0.10)"},
				{"WAL bytes/job", "1,020 (ceiling 1,024, floor 511)"},
			}, []string{"client_cpu_us_per_job", "store_cpu_us_per_job", "wal_bytes_per_job"}},
		{"sqlite: client only", Report{Cost: Cost{ClientCPUUsPerJob: v(14)},
			Ceiling: &Reference{Cost: Cost{ClientCPUUsPerJob: v(12)}}},
			[][2]string{{"client CPU µs/job", "14.00 (ceiling 12.00)"}}, []string{"client_cpu_us_per_job"}},
		{"a reference measured without the run", Report{Ceiling: &Reference{Cost: Cost{ClientCPUUsPerJob: v(2)}}},
			[][2]string{{"client CPU µs/job", "- (ceiling 2.00)"}}, nil},
		{"nothing measured", Report{}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.r.costRows(); !reflect.DeepEqual(got, tt.rows) {
				t.Errorf("rows = %q\nwant %q", got, tt.rows)
			}
			b, err := json.Marshal(tt.r.Cost)
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			if len(tt.jsonKeys) > 0 || string(b) != "{}" {
				keys = topLevelKeys(t, b)
			}
			if !reflect.DeepEqual(keys, tt.jsonKeys) {
				t.Errorf("JSON keys = %v, want %v", keys, tt.jsonKeys)
			}
			// Every row reaches the terminal table and the Markdown.
			var table strings.Builder
			WriteTable(&table, &tt.r)
			md := Markdown(&tt.r)
			for _, row := range tt.rows {
				if !strings.Contains(table.String(), row[1]) || !strings.Contains(md, "| "+capitalise(row[0])+" | "+row[1]+" |") {
					t.Errorf("row %q missing from the table or the Markdown:\n%s\n%s", row, table.String(), md)
				}
			}
		})
	}
}

func TestPointCostColumns(t *testing.T) {
	v := func(f float64) *float64 { return &f }
	points := []Point{{Processes: 1, Cost: Cost{StoreCPUUsPerJob: v(16), ClientCPUUsPerJob: v(7.25)}}, {Processes: 2}}
	cols := columnsOf(points)
	h := pointHeaders("processes", cols)
	if got := h[len(h)-3:]; !reflect.DeepEqual(got, []string{"Store CPU µs/job", "Client CPU µs/job", "WAL bytes/job"}) {
		t.Fatalf("last headers = %q", got)
	}
	for i, want := range [][]string{{"16.00", "7.25", "-"}, {"-", "-", "-"}} {
		c := pointCells(points[i], cols)
		if got := c[len(c)-3:]; !reflect.DeepEqual(got, want) {
			t.Errorf("point %d cost cells = %q, want %q", i, got, want)
		}
	}
	if columnsOf([]Point{{Processes: 1}}).cost {
		t.Error("points without costs get cost columns")
	}
}
