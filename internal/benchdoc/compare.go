package benchdoc

import (
	"fmt"
	"strings"
)

// Compare lists, table by table, every cell of the recordings under root
// that differs from the same cell recorded at the revision rev (a row
// named by its keys, a cell by its column), and the rows either lacks:
// what a change moved, or what a month did. Recordings of an uncommitted
// tree are compared too; an area rev has no recording of is said to be new.
func Compare(root, rev string) (string, error) {
	var b strings.Builder
	for _, a := range Areas {
		now, err := ReadRecord(root, a.Name)
		if err != nil {
			return "", err
		}
		old, err := recordAt(root, rev, a.Name)
		if err != nil {
			fmt.Fprintf(&b, "%s: nothing recorded at %s (%v)\n", a.Name, rev, err)
			continue
		}
		fmt.Fprintf(&b, "%s: %.12s (%s) against %.12s (%s)\n", a.Name, old.Commit, old.Date, now.Commit, now.Date)
		newTables, err := a.Tables(now)
		if err != nil {
			return "", fmt.Errorf("benchmarks/%s.txt: %w", a.Name, err)
		}
		oldTables, err := a.Tables(old)
		if err != nil {
			fmt.Fprintf(&b, "  the recording at %s does not read: %v\n", rev, err)
			continue
		}
		before := map[string]*Table{}
		for _, t := range oldTables {
			before[t.ID] = t
		}
		for _, t := range newTables {
			compareTable(&b, before[t.ID], t)
		}
	}
	return b.String(), nil
}

// compareTable writes what differs between the table old and now.
func compareTable(b *strings.Builder, old, now *Table) {
	if old == nil {
		fmt.Fprintf(b, "  %s: new\n", now.ID)
		return
	}
	rows := map[string][]string{}
	for _, r := range old.Rows {
		rows[old.rowName(r)] = r
	}
	same := 0
	for _, r := range now.Rows {
		name := now.rowName(r)
		was, ok := rows[name]
		delete(rows, name)
		if !ok {
			fmt.Fprintf(b, "  %s · %s: new\n", now.ID, name)
			continue
		}
		var moved []string
		for i := now.Keys; i < len(r) && i < len(was); i++ {
			if strings.Trim(r[i], "*") != strings.Trim(was[i], "*") && i < len(old.Header) && old.Header[i] == now.Header[i] {
				moved = append(moved, fmt.Sprintf("%s %s → %s", now.Header[i], strings.Trim(was[i], "*"), strings.Trim(r[i], "*")))
			}
		}
		if len(moved) == 0 {
			same++
			continue
		}
		fmt.Fprintf(b, "  %s · %s: %s\n", now.ID, name, strings.Join(moved, "; "))
	}
	for _, r := range old.Rows {
		if _, gone := rows[old.rowName(r)]; gone {
			fmt.Fprintf(b, "  %s · %s: gone\n", now.ID, old.rowName(r))
		}
	}
	fmt.Fprintf(b, "  %s: %d rows the same\n", now.ID, same)
}

// recordAt is the recording of area committed at rev.
func recordAt(root, rev, area string) (*Record, error) {
	path := "benchmarks/" + area + ".txt"
	out, err := output(root, "git", "show", rev+":"+path)
	if err != nil {
		return nil, err
	}
	return parseRecord(strings.NewReader(out), rev+":"+path, area)
}
