package main

import (
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Builders of YAML nodes: the template is written as a tree of nodes so
// that its keys keep the order chosen here, comments stay next to what
// they explain, and intrinsic functions use the short forms (!Ref, !GetAtt,
// !Sub) that people read.

// kv is one key of a mapping; comment, when set, is written above it.
type kv struct {
	key     string
	value   any
	comment string
}

// obj is a mapping in the given key order; nil values are left out.
func obj(pairs ...kv) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for _, p := range pairs {
		if p.value == nil {
			continue
		}
		if n, ok := p.value.(*yaml.Node); ok && n == nil {
			continue
		}
		k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: p.key, HeadComment: p.comment}
		m.Content = append(m.Content, k, node(p.value))
	}
	return m
}

// field is a kv without a comment.
func field(key string, value any) kv { return kv{key: key, value: value} }

// note is a kv with a comment above it.
func note(comment, key string, value any) kv { return kv{key: key, value: value, comment: comment} }

// list is a block sequence.
func list(items ...any) *yaml.Node {
	s := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	for _, it := range items {
		s.Content = append(s.Content, node(it))
	}
	return s
}

// flow is a sequence written on one line: [a, b].
func flow(items ...any) *yaml.Node {
	s := list(items...)
	s.Style = yaml.FlowStyle
	return s
}

// strs is a list of strings.
func strs(ss []string) *yaml.Node {
	items := make([]any, len(ss))
	for i, s := range ss {
		items[i] = s
	}
	return list(items...)
}

// node converts a Go value to a node.
func node(v any) *yaml.Node {
	switch v := v.(type) {
	case *yaml.Node:
		return v
	case string:
		n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v}
		if yaml11Bools[strings.ToLower(v)] || v == "y" || v == "Y" || v == "n" || v == "N" {
			// A string that YAML 1.1 reads as a boolean (PyYAML, and so
			// the SAM CLI and its translator, read "off" as false): quoted.
			n.Style = yaml.DoubleQuotedStyle
		}
		return n
	case int:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(v)}
	case float64:
		if v == float64(int64(v)) {
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(int64(v), 10)}
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: strconv.FormatFloat(v, 'f', -1, 64)}
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(v)}
	case []string:
		return strs(v)
	case map[string]any:
		// JSON data (the state machine definition): keys sorted, as
		// encoding/json writes them.
		n := &yaml.Node{}
		if err := n.Encode(v); err != nil {
			panic(err)
		}
		return n
	}
	panic(fmt.Sprintf("sam: no YAML node for %T", v))
}

// yaml11Bools are the words YAML 1.1 reads as booleans (besides y and n),
// lowercased.
var yaml11Bools = map[string]bool{"yes": true, "no": true, "on": true, "off": true, "true": true, "false": true}

// ref is !Ref name.
func ref(name string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!Ref", Value: name}
}

// getAtt is !GetAtt resource.attribute.
func getAtt(resourceAttr string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!GetAtt", Value: resourceAttr}
}

// sub is !Sub "string with ${...}".
func sub(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!Sub", Value: s}
}

// intrinsic is the short form of a function of a list of arguments:
// !<name> [args...].
func intrinsic(name string, args ...any) *yaml.Node {
	s := flow(args...)
	s.Tag = "!" + name
	return s
}

// fnIf is !If [condition, whenTrue, whenFalse].
func fnIf(condition string, whenTrue, whenFalse any) *yaml.Node {
	return intrinsic("If", condition, whenTrue, whenFalse)
}

// fnNot is !Not [condition].
func fnNot(condition *yaml.Node) *yaml.Node { return intrinsic("Not", condition) }

// fnEquals is !Equals [a, b].
func fnEquals(a, b any) *yaml.Node { return intrinsic("Equals", a, b) }

// fnSelect is !Select [index, list].
func fnSelect(index int, from any) *yaml.Node { return intrinsic("Select", index, from) }

// fnSplit is !Split [separator, value].
func fnSplit(sep string, value any) *yaml.Node { return intrinsic("Split", sep, value) }

// fnJoin is !Join [separator, values].
func fnJoin(sep string, values any) *yaml.Node { return intrinsic("Join", sep, values) }
