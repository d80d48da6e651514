package partitionsim

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
)

// handlers meter and throttle the operations that read or write items.
var handlers = map[string]func(*Sim, context.Context, http.ResponseWriter, call) error{
	"GetItem":            (*Sim).getItem,
	"Query":              (*Sim).query,
	"PutItem":            (*Sim).writeItem,
	"UpdateItem":         (*Sim).writeItem,
	"DeleteItem":         (*Sim).writeItem,
	"BatchGetItem":       (*Sim).batchGet,
	"BatchWriteItem":     (*Sim).batchWrite,
	"TransactWriteItems": (*Sim).transactWrite,
	"TransactGetItems":   (*Sim).transactGet,
}

// write is one item a request writes (or, in a transaction, checks).
type write struct {
	table    *table
	kind     string // Put, Update, Delete, ConditionCheck
	key      item
	put      item // the item of a Put
	old, new item // the stored image before, and after (once known)
}

// prepare reads the image a write replaces and estimates the new one (an
// update's is its old image until it is read back).
func (s *Sim) prepare(ctx context.Context, c call, tableName, kind string, key, put item) (*write, error) {
	t, err := s.table(ctx, c, tableName)
	if err != nil {
		return nil, err
	}
	w := &write{table: t, kind: kind, key: key, put: put}
	if kind == "Put" {
		w.key = item{t.pk: put[t.pk]}
		if t.sk != "" {
			w.key[t.sk] = put[t.sk]
		}
	}
	if w.old, err = s.image(ctx, c, t, w.key); err != nil {
		return nil, err
	}
	switch kind {
	case "Put":
		w.new = put
	case "Update", "ConditionCheck":
		w.new = w.old
	}
	return w, nil
}

// accesses is what the write takes, with its images as they are known.
func (w *write) accesses(transactional bool) []access {
	if w.kind == "ConditionCheck" {
		return []access{{key: Key{Table: w.table.name, PK: str(w.key[w.table.pk])}, units: 2 * readUnits(w.old.size(), true)}}
	}
	return w.table.writes(w.key, w.old, w.new, transactional)
}

// settle reads back an update's new image and charges the writes what
// they cost in place of the estimate.
func (s *Sim) settle(ctx context.Context, c call, ws []*write, estimated []access, transactional bool) {
	var actual []access
	for _, w := range ws {
		if w.kind == "Update" {
			if img, err := s.image(ctx, c, w.table, w.key); err == nil {
				w.new = img
			}
		}
		actual = append(actual, w.accesses(transactional)...)
	}
	s.meter.settle(estimated, actual)
}

func (s *Sim) writeItem(ctx context.Context, rw http.ResponseWriter, c call) error {
	var in struct {
		TableName string
		Key, Item item
	}
	if err := json.Unmarshal(c.body, &in); err != nil {
		return err
	}
	kind := strings.TrimSuffix(c.op, "Item")
	w, err := s.prepare(ctx, c, in.TableName, kind, in.Key, in.Item)
	if err != nil {
		return err
	}
	est := w.accesses(false)
	if s.meter.admit([][]access{est})[0] {
		throttled(rw)
		return nil
	}
	a := s.forward(ctx, c, c.body)
	if a.ok() {
		s.settle(ctx, c, []*write{w}, est, false)
	}
	s.pass(rw, a)
	return nil
}

// transactItem is one element of TransactWriteItems.
type transactItem map[string]struct {
	TableName string
	Key, Item item
}

func (s *Sim) transactWrite(ctx context.Context, rw http.ResponseWriter, c call) error {
	var in struct{ TransactItems []transactItem }
	if err := json.Unmarshal(c.body, &in); err != nil {
		return err
	}
	var ws []*write
	groups := make([][]access, 0, len(in.TransactItems))
	for _, ti := range in.TransactItems {
		for kind, op := range ti {
			w, err := s.prepare(ctx, c, op.TableName, kind, op.Key, op.Item)
			if err != nil {
				return err
			}
			ws = append(ws, w)
			groups = append(groups, w.accesses(true))
		}
	}
	// The transaction is one request: its items are admitted together,
	// or it is cancelled naming the items whose keys had no capacity.
	var all []access
	for _, g := range groups {
		all = append(all, g...)
	}
	if s.meter.admit([][]access{all})[0] {
		s.cancel(rw, groups)
		return nil
	}
	a := s.forward(ctx, c, c.body)
	if a.ok() {
		s.settle(ctx, c, ws, all, true)
	}
	s.pass(rw, a)
	return nil
}

func (s *Sim) batchWrite(ctx context.Context, rw http.ResponseWriter, c call) error {
	var in struct {
		RequestItems map[string][]struct {
			PutRequest    *struct{ Item item } `json:",omitempty"`
			DeleteRequest *struct{ Key item }  `json:",omitempty"`
		}
	}
	var raw struct {
		RequestItems map[string][]json.RawMessage
	}
	if err := json.Unmarshal(c.body, &in); err != nil {
		return err
	}
	if err := json.Unmarshal(c.body, &raw); err != nil {
		return err
	}
	type entry struct {
		table string
		raw   json.RawMessage
		w     *write
	}
	var entries []entry
	var groups [][]access
	for name, reqs := range in.RequestItems {
		for i, r := range reqs {
			var w *write
			var err error
			if r.PutRequest != nil {
				w, err = s.prepare(ctx, c, name, "Put", nil, r.PutRequest.Item)
			} else if r.DeleteRequest != nil {
				w, err = s.prepare(ctx, c, name, "Delete", r.DeleteRequest.Key, nil)
			} else {
				return fmt.Errorf("BatchWriteItem: a request of %s is neither a put nor a delete", name)
			}
			if err != nil {
				return err
			}
			entries = append(entries, entry{name, raw.RequestItems[name][i], w})
			groups = append(groups, w.accesses(false))
		}
	}
	refused := s.meter.admit(groups)
	sent := map[string][]json.RawMessage{}
	unprocessed := map[string][]json.RawMessage{}
	var ws []*write
	var est []access
	for i, e := range entries {
		if refused[i] {
			unprocessed[e.table] = append(unprocessed[e.table], e.raw)
			continue
		}
		sent[e.table] = append(sent[e.table], e.raw)
		ws = append(ws, e.w)
		est = append(est, groups[i]...)
	}
	a, sentAny, err := s.forwardBatch(ctx, rw, c, len(sent) > 0, sent)
	if err != nil || !sentAny {
		return err
	}
	s.settle(ctx, c, ws, est, false)
	out, err := mergeUnprocessed(a.body, "UnprocessedItems", unprocessed)
	if err != nil {
		return err
	}
	s.passRewritten(rw, a, out)
	return nil
}

// forwardBatch forwards a batch with the request items the Sim admitted
// (sent, when any is): none throttles the whole batch, as DynamoDB does;
// an upstream error is passed on. It reports whether the caller has a
// successful answer to complete.
func (s *Sim) forwardBatch(ctx context.Context, rw http.ResponseWriter, c call, admitted bool, sent any) (answer, bool, error) {
	if !admitted {
		throttled(rw)
		return answer{}, false, nil
	}
	body, err := rewrite(c.body, "RequestItems", sent)
	if err != nil {
		return answer{}, false, err
	}
	a := s.forward(ctx, c, body)
	if !a.ok() {
		s.pass(rw, a)
		return a, false, nil
	}
	return a, true, nil
}

// rewrite sets one field of a JSON object.
func rewrite(body []byte, field string, v any) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	m[field] = b
	return json.Marshal(m)
}

// mergeUnprocessed adds the items the Sim refused to those an answer left
// unprocessed (a map of table name to a list of requests or to {Keys}).
func mergeUnprocessed[V any](body []byte, field string, refused map[string]V) ([]byte, error) {
	if len(refused) == 0 {
		return body, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, err
	}
	var left map[string]json.RawMessage
	if m[field] != nil {
		if err := json.Unmarshal(m[field], &left); err != nil {
			return nil, err
		}
	}
	if left == nil {
		left = map[string]json.RawMessage{}
	}
	for name, v := range refused {
		merged, err := mergeTable(left[name], v)
		if err != nil {
			return nil, err
		}
		left[name] = merged
	}
	b, err := json.Marshal(left)
	if err != nil {
		return nil, err
	}
	m[field] = b
	return json.Marshal(m)
}

// mergeTable joins what upstream left of one table with what the Sim
// refused: lists of write requests, or BatchGetItem's {Keys, ...}.
func mergeTable(left json.RawMessage, refused any) (json.RawMessage, error) {
	switch r := refused.(type) {
	case []json.RawMessage:
		var l []json.RawMessage
		if left != nil {
			if err := json.Unmarshal(left, &l); err != nil {
				return nil, err
			}
		}
		return json.Marshal(append(l, r...))
	case keysAndAttrs:
		if left != nil {
			var l keysAndAttrs
			if err := json.Unmarshal(left, &l); err != nil {
				return nil, err
			}
			r.Keys = append(l.Keys, r.Keys...)
		}
		return json.Marshal(r)
	}
	return nil, fmt.Errorf("unprocessed items of type %T", refused)
}

// keysAndAttrs is a table's part of BatchGetItem, its other fields
// (projection, consistency) kept as they came.
type keysAndAttrs struct {
	Keys  []item
	Other map[string]json.RawMessage `json:"-"`
}

func (k keysAndAttrs) MarshalJSON() ([]byte, error) {
	m := map[string]any{}
	for f, v := range k.Other {
		m[f] = v
	}
	m["Keys"] = k.Keys
	return json.Marshal(m)
}

func (k *keysAndAttrs) UnmarshalJSON(b []byte) error {
	if err := json.Unmarshal(b, &k.Other); err != nil {
		return err
	}
	if raw, ok := k.Other["Keys"]; ok {
		delete(k.Other, "Keys")
		return json.Unmarshal(raw, &k.Keys)
	}
	return nil
}

func (s *Sim) getItem(ctx context.Context, rw http.ResponseWriter, c call) error {
	var in struct {
		TableName      string
		Key            item
		ConsistentRead bool
	}
	if err := json.Unmarshal(c.body, &in); err != nil {
		return err
	}
	t, err := s.table(ctx, c, in.TableName)
	if err != nil {
		return err
	}
	k := Key{Table: t.name, PK: str(in.Key[t.pk])}
	s.read(ctx, rw, c, k, in.ConsistentRead, func(body []byte) int {
		var out struct{ Item item }
		_ = json.Unmarshal(body, &out)
		return out.Item.size()
	})
	return nil
}

// read admits a read of key k at its least units, forwards it, and
// charges what the answer shows it read (size: the bytes it read).
func (s *Sim) read(ctx context.Context, rw http.ResponseWriter, c call, k Key, consistent bool, size func(answer []byte) int) {
	est := []access{{key: k, units: readUnits(0, consistent)}}
	if s.meter.admit([][]access{est})[0] {
		throttled(rw)
		return
	}
	a := s.forward(ctx, c, c.body)
	if a.ok() {
		s.meter.settle(est, []access{{key: k, units: readUnits(size(a.body), consistent)}})
	}
	s.pass(rw, a)
}

// equality matches "<name> = <value placeholder>" in a key condition.
var equality = regexp.MustCompile(`([#\w.]+)\s*=\s*(:[\w]+)`)

func (s *Sim) query(ctx context.Context, rw http.ResponseWriter, c call) error {
	var in struct {
		TableName, IndexName      string
		KeyConditionExpression    string
		ExpressionAttributeNames  map[string]string
		ExpressionAttributeValues item
		ConsistentRead            bool
	}
	if err := json.Unmarshal(c.body, &in); err != nil {
		return err
	}
	t, err := s.table(ctx, c, in.TableName)
	if err != nil {
		return err
	}
	hash := t.pk
	if in.IndexName != "" {
		ix, ok := t.indexNamed(in.IndexName)
		if !ok {
			s.pass(rw, s.forward(ctx, c, c.body)) // upstream names the mistake
			return nil
		}
		hash = ix.pk
	}
	k := Key{Table: t.name, Index: in.IndexName}
	for _, m := range equality.FindAllStringSubmatch(in.KeyConditionExpression, -1) {
		name := m[1]
		if strings.HasPrefix(name, "#") {
			name = in.ExpressionAttributeNames[name]
		}
		if name == hash {
			k.PK = str(in.ExpressionAttributeValues[m[2]])
		}
	}
	s.read(ctx, rw, c, k, in.ConsistentRead, func(body []byte) int {
		var out struct {
			Items               []item
			Count, ScannedCount int
		}
		_ = json.Unmarshal(body, &out)
		size := 0
		for _, it := range out.Items {
			size += it.size()
		}
		if out.Count > 0 && out.ScannedCount > out.Count { // a filter dropped items it read
			size = size * out.ScannedCount / out.Count
		}
		return size
	})
	return nil
}

func (s *Sim) batchGet(ctx context.Context, rw http.ResponseWriter, c call) error {
	var in struct{ RequestItems map[string]keysAndAttrs }
	if err := json.Unmarshal(c.body, &in); err != nil {
		return err
	}
	type entry struct {
		table      *table
		key        item
		consistent bool
	}
	var entries []entry
	var groups [][]access
	for name, req := range in.RequestItems {
		t, err := s.table(ctx, c, name)
		if err != nil {
			return err
		}
		var consistent bool
		_ = json.Unmarshal(req.Other["ConsistentRead"], &consistent)
		for _, key := range req.Keys {
			entries = append(entries, entry{t, key, consistent})
			groups = append(groups, []access{{key: Key{Table: t.name, PK: str(key[t.pk])}, units: readUnits(0, consistent)}})
		}
	}
	refused := s.meter.admit(groups)
	sent := map[string]keysAndAttrs{}
	unprocessed := map[string]keysAndAttrs{}
	var est []access
	for i, e := range entries {
		target := sent
		if refused[i] {
			target = unprocessed
		} else {
			est = append(est, groups[i]...)
		}
		ka := target[e.table.name]
		ka.Other = in.RequestItems[e.table.name].Other
		ka.Keys = append(ka.Keys, e.key)
		target[e.table.name] = ka
	}
	a, sentAny, err := s.forwardBatch(ctx, rw, c, len(sent) > 0, sent)
	if err != nil || !sentAny {
		return err
	}
	var out struct{ Responses map[string][]item }
	_ = json.Unmarshal(a.body, &out)
	var actual []access
	for i, e := range entries {
		if refused[i] {
			continue
		}
		size := 0
		for _, it := range out.Responses[e.table.name] {
			if string(it[e.table.pk]) == string(e.key[e.table.pk]) && (e.table.sk == "" || string(it[e.table.sk]) == string(e.key[e.table.sk])) {
				size = it.size()
			}
		}
		actual = append(actual, access{key: Key{Table: e.table.name, PK: str(e.key[e.table.pk])}, units: readUnits(size, e.consistent)})
	}
	s.meter.settle(est, actual)
	merged, err := mergeUnprocessed(a.body, "UnprocessedKeys", unprocessed)
	if err != nil {
		return err
	}
	s.passRewritten(rw, a, merged)
	return nil
}

func (s *Sim) transactGet(ctx context.Context, rw http.ResponseWriter, c call) error {
	var in struct {
		TransactItems []struct {
			Get struct {
				TableName string
				Key       item
			}
		}
	}
	if err := json.Unmarshal(c.body, &in); err != nil {
		return err
	}
	var est []access
	keys := make([]Key, len(in.TransactItems))
	for i, ti := range in.TransactItems {
		t, err := s.table(ctx, c, ti.Get.TableName)
		if err != nil {
			return err
		}
		keys[i] = Key{Table: t.name, PK: str(ti.Get.Key[t.pk])}
		est = append(est, access{key: keys[i], units: 2 * readUnits(0, true)})
	}
	if s.meter.admit([][]access{est})[0] {
		groups := make([][]access, len(est))
		for i := range est {
			groups[i] = est[i : i+1]
		}
		s.cancel(rw, groups)
		return nil
	}
	a := s.forward(ctx, c, c.body)
	if a.ok() {
		var out struct{ Responses []struct{ Item item } }
		_ = json.Unmarshal(a.body, &out)
		actual := make([]access, len(keys))
		for i, k := range keys {
			size := 0
			if i < len(out.Responses) {
				size = out.Responses[i].Item.size()
			}
			actual[i] = access{key: k, units: 2 * readUnits(size, true)}
		}
		s.meter.settle(est, actual)
	}
	s.pass(rw, a)
	return nil
}

// cancel answers a transaction refused for throughput as DynamoDB does:
// TransactionCanceledException with a reason per item, ThrottlingError
// for the items whose keys had no capacity left.
func (s *Sim) cancel(rw http.ResponseWriter, items [][]access) {
	s.cancelled.Add(1)
	reasons := make([]map[string]string, len(items))
	codes := make([]string, len(items))
	named := false
	for i, g := range items {
		codes[i], reasons[i] = "None", map[string]string{"Code": "None"}
		if s.meter.over(g) {
			codes[i], reasons[i], named = "ThrottlingError", map[string]string{"Code": "ThrottlingError", "Message": throughputMessage}, true
		}
	}
	for i := range items { // no item alone is over, only all of them together
		if !named {
			codes[i], reasons[i] = "ThrottlingError", map[string]string{"Code": "ThrottlingError", "Message": throughputMessage}
		}
	}
	writeJSON(rw, http.StatusBadRequest, map[string]any{
		"__type":              "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
		"message":             "Transaction cancelled, please refer cancellation reasons for specific reasons [" + strings.Join(codes, ", ") + "]",
		"CancellationReasons": reasons,
	})
}
