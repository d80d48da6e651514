package apikeys_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/sourcebase/sourcebase/internal/apikeys"
	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/store"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// newOrg is a service over a fresh table and an organization of it.
func newOrg(t *testing.T, keyLimit int64) (*apikeys.Service, *store.Store, apikeys.Organization) {
	t.Helper()
	st := testenv.Store(t)
	ks := apikeys.New(st)
	org, err := ks.CreateOrg(context.Background(), "  Acme Capital  ", keyLimit)
	if err != nil {
		t.Fatal(err)
	}
	return ks, st, org
}

func mustKey(t *testing.T, ks *apikeys.Service, org, name, role string) apikeys.Created {
	t.Helper()
	k, err := ks.CreateKey(context.Background(), org, name, role)
	if err != nil {
		t.Fatalf("create key %s: %v", name, err)
	}
	return k
}

func TestAKeysSecretIsShownOnceAndStoredOnlyAsItsSHA256(t *testing.T) {
	t.Parallel()
	ks, st, org := newOrg(t, 0)
	if org.Name != "Acme Capital" || org.KeyLimit != apikeys.DefaultKeyLimit || !strings.HasPrefix(org.ID, "org_") {
		t.Errorf("the organization: %+v", org)
	}
	k := mustKey(t, ks, org.ID, "ci", "")
	if k.Role != apikeys.RoleMember || k.Name != "ci" || k.OrganizationID != org.ID || !strings.HasPrefix(k.ClientID, "ck_") {
		t.Errorf("the key: %+v", k)
	}
	// 256 random bits, URL-safe.
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(k.Secret, "sk_"))
	if !strings.HasPrefix(k.Secret, "sk_") || err != nil || len(raw) != 32 || k.KeyLastFour != k.Secret[len(k.Secret)-4:] {
		t.Errorf("the secret %q (last four %q): %d bytes, %v", k.Secret, k.KeyLastFour, len(raw), err)
	}
	// Nothing in the table holds the secret, or any long part of it.
	body := strings.TrimPrefix(k.Secret, "sk_")
	for _, v := range testenv.ScanText(t, st) {
		for i := 0; i+8 <= len(body); i += 4 {
			if strings.Contains(v, body[i:i+8]) {
				t.Fatalf("the table holds part of the secret: %s", v)
			}
		}
	}
	// What is stored is its SHA-256, and authentication reads it.
	got, err := ks.Lookup(context.Background(), k.ClientID)
	sum := sha256.Sum256([]byte(k.Secret))
	if err != nil || got.SecretHash != hex.EncodeToString(sum[:]) || got.SecretHash != apikeys.HashSecret(k.Secret) {
		t.Errorf("the stored hash %q, %v", got.SecretHash, err)
	}
	if got.Public().SecretHash != "" {
		t.Error("Public keeps the hash")
	}
	// Two keys never share a secret.
	if other := mustKey(t, ks, org.ID, "ci 2", ""); other.Secret == k.Secret || other.ClientID == k.ClientID {
		t.Error("two keys share a secret or a client id")
	}
}

func TestListingsNeverCarryTheSecretHash(t *testing.T) {
	t.Parallel()
	ks, _, org := newOrg(t, 0)
	for _, name := range []string{"zeta", "Alpha", "mid"} {
		mustKey(t, ks, org.ID, name, apikeys.RoleMember)
	}
	all, err := ks.List(context.Background(), org.ID)
	if err != nil || len(all) != 3 {
		t.Fatalf("list: %d keys, %v", len(all), err)
	}
	for _, k := range all {
		if k.SecretHash != "" {
			t.Errorf("the list shows %s's hash", k.Name)
		}
	}
	if all[0].Name != "zeta" || all[2].Name != "mid" {
		t.Errorf("the list is not oldest first: %s, %s, %s", all[0].Name, all[1].Name, all[2].Name)
	}
	p, err := ks.Page(context.Background(), org.ID, store.Query{Limit: 10, Sort: "name"})
	if err != nil || len(p.Items) != 3 {
		t.Fatalf("a page by name: %+v, %v", p, err)
	}
	var names []string
	for _, k := range p.Items {
		names = append(names, k.Name)
		if k.SecretHash != "" {
			t.Errorf("a page shows %s's hash", k.Name)
		}
	}
	if strings.Join(names, ",") != "Alpha,mid,zeta" {
		t.Errorf("sorted by name, case-insensitively: %v", names)
	}
	if !strings.Contains(strings.Join(apikeys.SortFields(), ","), "name") {
		t.Errorf("sort fields: %v", apikeys.SortFields())
	}
}

func TestAKeyNeedsANameARoleAndAnExistingOrganization(t *testing.T) {
	t.Parallel()
	ks, _, org := newOrg(t, 0)
	ctx := context.Background()
	for _, c := range []struct{ org, name, role, field string }{
		{org.ID, "", "", "name"},
		{org.ID, "   ", "", "name"},
		{org.ID, strings.Repeat("é", 201), "", "name"},
		{org.ID, "ok", "owner", "role"},
		{org.ID, "ok", "Admin", "role"},
		{"org_01missing", "ok", "", "org"},
	} {
		_, err := ks.CreateKey(ctx, c.org, c.name, c.role)
		var inv *apperr.InvalidError
		if !errors.As(err, &inv) || !strings.HasPrefix(err.Error(), c.field) {
			t.Errorf("CreateKey(%q, %q, %q): %v, want a 400 naming %s", c.org, c.name[:min(len(c.name), 10)], c.role, err, c.field)
		}
	}
	if _, err := ks.CreateKey(ctx, org.ID, strings.Repeat("é", 200), ""); err != nil {
		t.Errorf("a name of 200 characters: %v", err)
	}
	if _, err := ks.CreateOrg(ctx, " ", 0); err == nil {
		t.Error("an organization without a name was created")
	}
}

func TestAnOrganizationHoldsAtMostItsKeyLimitAndARevokedKeyFreesASlot(t *testing.T) {
	t.Parallel()
	ks, _, org := newOrg(t, 3)
	ctx := context.Background()
	admin := mustKey(t, ks, org.ID, "admin", apikeys.RoleAdmin)
	mustKey(t, ks, org.ID, "a", "")
	b := mustKey(t, ks, org.ID, "b", "")
	if _, err := ks.CreateKey(ctx, org.ID, "c", ""); !errors.Is(err, apperr.ErrConflict) || !strings.Contains(err.Error(), "limit of 3") {
		t.Errorf("a fourth key: %v", err)
	}
	if err := ks.Revoke(ctx, org.ID, b.ClientID); err != nil {
		t.Fatal(err)
	}
	mustKey(t, ks, org.ID, "c", "")
	if _, err := ks.CreateKey(ctx, org.ID, "d", ""); !errors.Is(err, apperr.ErrConflict) {
		t.Errorf("a fourth key after one was replaced: %v", err)
	}
	// The operator's revocation frees a slot as well.
	if err := ks.Revoke(ctx, "", admin.ClientID); err != nil {
		t.Fatal(err)
	}
	mustKey(t, ks, org.ID, "d", "")
}

func TestConcurrentCreationsNeverExceedTheLimit(t *testing.T) {
	t.Parallel()
	ks, _, org := newOrg(t, 4)
	var wg sync.WaitGroup
	errs := make([]error, 10)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = ks.CreateKey(context.Background(), org.ID, fmt.Sprintf("k%d", i), "")
		}()
	}
	wg.Wait()
	made := 0
	for _, err := range errs {
		switch {
		case err == nil:
			made++
		case !errors.Is(err, apperr.ErrConflict):
			t.Errorf("a creation failed otherwise: %v", err)
		}
	}
	all, err := ks.List(context.Background(), org.ID)
	if err != nil || made != 4 || len(all) != 4 {
		t.Errorf("%d creations succeeded, %d keys listed (%v); the limit is 4", made, len(all), err)
	}
}

func TestRevokingIsScopedToTheOrganizationAndKeepsItsLastAdminKey(t *testing.T) {
	t.Parallel()
	ks, st, org := newOrg(t, 0)
	ctx := context.Background()
	other, err := ks.CreateOrg(ctx, "Other", 0)
	if err != nil {
		t.Fatal(err)
	}
	a1 := mustKey(t, ks, org.ID, "a1", apikeys.RoleAdmin)
	a2 := mustKey(t, ks, org.ID, "a2", apikeys.RoleAdmin)
	m := mustKey(t, ks, org.ID, "m", apikeys.RoleMember)
	theirs := mustKey(t, ks, other.ID, "theirs", apikeys.RoleAdmin)

	// Another organization's key is not found, and stays.
	if err := ks.Revoke(ctx, org.ID, theirs.ClientID); !errors.Is(err, apperr.ErrNotFound) {
		t.Errorf("revoking another organization's key: %v", err)
	}
	if _, err := ks.Lookup(ctx, theirs.ClientID); err != nil {
		t.Errorf("the other organization's key after a refused revocation: %v", err)
	}
	if err := ks.Revoke(ctx, org.ID, "ck_01missing"); !errors.Is(err, apperr.ErrNotFound) {
		t.Errorf("revoking an unknown key: %v", err)
	}
	if err := ks.Revoke(ctx, org.ID, m.ClientID); err != nil {
		t.Errorf("revoking a member key: %v", err)
	}
	if err := ks.Revoke(ctx, org.ID, m.ClientID); !errors.Is(err, apperr.ErrNotFound) {
		t.Errorf("revoking it again: %v", err)
	}
	// One of two admins may go (even itself), the last may not.
	if err := ks.Revoke(ctx, org.ID, a1.ClientID); err != nil {
		t.Errorf("revoking one of two admin keys: %v", err)
	}
	err = ks.Revoke(ctx, org.ID, a2.ClientID)
	if !errors.Is(err, apperr.ErrConflict) || !strings.Contains(err.Error(), "last admin key") {
		t.Errorf("revoking the last admin key: %v", err)
	}
	if _, err := ks.Lookup(ctx, a2.ClientID); err != nil {
		t.Errorf("the last admin key after a refused revocation: %v", err)
	}
	// The operator (no organization) may revoke any key, the last admin's too.
	if err := ks.Revoke(ctx, "", a2.ClientID); err != nil {
		t.Errorf("the operator revoking the last admin key: %v", err)
	}
	if all, err := ks.List(ctx, org.ID); err != nil || len(all) != 0 {
		t.Errorf("keys left: %v %v", all, err)
	}
	for _, id := range []string{a2.ClientID, m.ClientID} {
		k := store.APIKeyKey(id)
		var doc map[string]any
		if _, err := st.Get(ctx, k.PK, k.SK, &doc); !errors.Is(err, apperr.ErrNotFound) {
			t.Errorf("the revoked key %s is still in the table: %v %v", id, doc, err)
		}
		// Only its deletion marker remains, naming who revoked it (for
		// the change history), until it expires.
		if a, _, ok, err := st.DeletedBy(ctx, org.ID, store.TypeAPIKey, id); err != nil || !ok || a.Type != store.ActorSystem {
			t.Errorf("the revoked key %s has no deletion marker: %v %v %v", id, a, ok, err)
		}
	}
}

func TestTwoAdminsRevokingEachOtherAtOnceLeaveOne(t *testing.T) {
	t.Parallel()
	ks, _, org := newOrg(t, 0)
	a := mustKey(t, ks, org.ID, "a", apikeys.RoleAdmin)
	b := mustKey(t, ks, org.ID, "b", apikeys.RoleAdmin)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, id := range []string{a.ClientID, b.ClientID} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = ks.Revoke(context.Background(), org.ID, id)
		}()
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
		} else if !errors.Is(err, apperr.ErrConflict) {
			t.Errorf("a revocation failed otherwise: %v", err)
		}
	}
	all, err := ks.List(context.Background(), org.ID)
	if err != nil || ok != 1 || len(all) != 1 || all[0].Role != apikeys.RoleAdmin {
		t.Errorf("%d revocations succeeded; keys left %+v (%v)", ok, all, err)
	}
}

func TestLookupOfAnIDNoKeyCanHaveIsNotFound(t *testing.T) {
	t.Parallel()
	ks, _, _ := newOrg(t, 0)
	for _, id := range []string{"", strings.Repeat("k", store.MaxIDLength+1), "ck_01missing"} {
		if _, err := ks.Lookup(context.Background(), id); !errors.Is(err, apperr.ErrNotFound) {
			t.Errorf("Lookup(%q...): %v", id[:min(len(id), 12)], err)
		}
	}
}
