// Package s3blob is the blob.Store of the deployed service: the files of
// bulk jobs are objects of an S3 bucket, uploaded and downloaded by clients
// through presigned URLs.
//
// Writes are streamed as multipart uploads (feature/s3/transfermanager), so
// an export of unknown size is never held whole in memory. Objects are
// encrypted with the bucket's default encryption; no request sets its own.
package s3blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/sourcebase/sourcebase/internal/blob"
)

// PartSize is the size of the parts of Write's multipart uploads: 8 MiB.
// Write holds at most uploadConcurrency+1 parts in memory, whatever the
// size of the object; a write of less than one part is a single PutObject.
// With S3's limit of 10,000 parts, the largest object Write stores is
// about 78 GiB.
const PartSize = 8 << 20

// uploadConcurrency is how many parts Write uploads at once.
const uploadConcurrency = 3

// Store is a blob.Store over an S3 bucket. It is safe for concurrent use.
type Store struct {
	client   *s3.Client
	presign  *s3.PresignClient
	uploader *transfermanager.Client
	bucket   string
}

var _ blob.Store = (*Store)(nil)

// New returns a Store over bucket, calling S3 with client.
func New(client *s3.Client, bucket string) *Store {
	return &Store{
		client:  client,
		presign: s3.NewPresignClient(client),
		uploader: transfermanager.New(client, func(o *transfermanager.Options) {
			o.PartSizeBytes = PartSize
			o.MultipartUploadThreshold = PartSize
			o.Concurrency = uploadConcurrency
		}),
		bucket: bucket,
	}
}

// Write stores key from r, as a multipart upload when r gives more than
// PartSize bytes; a failed multipart upload is aborted.
func (s *Store) Write(ctx context.Context, key string, r io.Reader) (int64, error) {
	if err := blob.ValidateKey(key); err != nil {
		return 0, err
	}
	// counter also hides r's other methods (io.Seeker), so that the
	// uploader streams it rather than seeking to learn its size.
	body := &counter{r: r}
	_, err := s.uploader.UploadObject(ctx, &transfermanager.UploadObjectInput{
		Bucket: aws.String(s.bucket),
		Key:    aws.String(key),
		Body:   body,
	})
	if err != nil {
		return 0, s.fail("write", key, err)
	}
	return body.n, nil
}

// Open reads key from offset with a ranged GetObject; an offset equal to
// the size reads nothing, a larger one is an error. The object is read
// under ctx: when it ends, so does the reading.
func (s *Store) Open(ctx context.Context, key string, offset int64) (io.ReadCloser, error) {
	return s.OpenVersion(ctx, key, offset, "")
}

// OpenVersion is Open of the object whose ETag is version ("": any), read
// with If-Match: S3 answers 412 when key holds another object.
func (s *Store) OpenVersion(ctx context.Context, key string, offset int64, version string) (io.ReadCloser, error) {
	if err := blob.ValidateKey(key); err != nil {
		return nil, err
	}
	if offset < 0 {
		return nil, fmt.Errorf("s3blob: open %q: negative offset %d", key, offset)
	}
	in := &s3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(key)}
	if offset > 0 {
		in.Range = aws.String(fmt.Sprintf("bytes=%d-", offset))
	}
	if version != "" {
		in.IfMatch = aws.String(version)
	}
	out, err := s.client.GetObject(ctx, in)
	if err != nil && isPreconditionFailed(err) {
		return nil, fmt.Errorf("s3blob: open %q in bucket %s: %w", key, s.bucket, blob.ErrReplaced)
	}
	if err != nil && offset > 0 && isInvalidRange(err) {
		// S3 refuses a range that starts at the end; Dir reads nothing there.
		info, serr := s.Stat(ctx, key)
		if serr != nil {
			return nil, serr
		}
		if offset == info.Size {
			return io.NopCloser(strings.NewReader("")), nil
		}
		return nil, fmt.Errorf("s3blob: open %q: offset %d is beyond the size %d", key, offset, info.Size)
	}
	if err != nil {
		return nil, s.fail("open", key, err)
	}
	return out.Body, nil
}

// Stat returns key's size from HeadObject.
func (s *Store) Stat(ctx context.Context, key string) (blob.Info, error) {
	if err := blob.ValidateKey(key); err != nil {
		return blob.Info{}, err
	}
	out, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(key)})
	if err != nil {
		return blob.Info{}, s.fail("stat", key, err)
	}
	return blob.Info{Size: aws.ToInt64(out.ContentLength), Version: aws.ToString(out.ETag)}, nil
}

// Delete removes key; S3 answers the same whether it existed or not.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := blob.ValidateKey(key); err != nil {
		return err
	}
	_, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(key)})
	if err != nil && !isNotFound(err) {
		return s.fail("delete", key, err)
	}
	return nil
}

// UploadURL presigns a PutObject of key, valid for ttl (at most

// Listing is s as a blob.Lister (the operator's commands list a bucket's
// files through it).
func Listing(s *Store) blob.Lister { return lister{s} }

// lister lists a Store's bucket. Listing is its method, not Store's: an
// exported method of a type held in an interface is linked into every
// binary that reflects on methods, which every function does, and
// ListObjectsV2's client code is some 30 KB.
type lister struct{ *Store }

// List pages ListObjectsV2 under prefix (1,000 keys a call).
func (l lister) List(ctx context.Context, prefix string) ([]blob.Object, error) {
	s := l.Store
	if err := blob.ValidatePrefix(prefix); err != nil {
		return nil, err
	}
	var out []blob.Object
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{Bucket: aws.String(s.bucket), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, s.fail("list", prefix, err)
		}
		for _, o := range page.Contents {
			out = append(out, blob.Object{Key: aws.ToString(o.Key), Size: aws.ToInt64(o.Size)})
		}
	}
	return out, nil
}

// blob.MaxURLTTL, and no longer than the credentials that sign it last).
func (s *Store) UploadURL(ctx context.Context, key string, ttl time.Duration) (string, error) {
	if err := blob.ValidateKey(key); err != nil {
		return "", err
	}
	if err := blob.ValidateTTL(ttl, blob.MaxURLTTL); err != nil {
		return "", fmt.Errorf("s3blob: upload URL of %q: %w", key, err)
	}
	req, err := s.presign.PresignPutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(s.bucket),
		Key:    aws.String(key),
	}, s3.WithPresignExpires(ttl))
	if err != nil {
		return "", fmt.Errorf("s3blob: upload URL of %q: %w", key, err)
	}
	if err := onlyHost(req.SignedHeader); err != nil {
		return "", fmt.Errorf("s3blob: upload URL of %q: %w", key, err)
	}
	return req.URL, nil
}

// DownloadURL presigns a GetObject of key, valid for ttl (at most
// blob.MaxURLTTL), whose answer has the Content-Disposition and
// Content-Type of blob.DownloadHeaders(filename, contentType).
func (s *Store) DownloadURL(ctx context.Context, key string, ttl time.Duration, filename, contentType string) (string, error) {
	if err := blob.ValidateKey(key); err != nil {
		return "", err
	}
	if err := blob.ValidateTTL(ttl, blob.MaxURLTTL); err != nil {
		return "", fmt.Errorf("s3blob: download URL of %q: %w", key, err)
	}
	disposition, ctype, err := blob.DownloadHeaders(filename, contentType)
	if err != nil {
		return "", fmt.Errorf("s3blob: download URL of %q: %w", key, err)
	}
	req, err := s.presign.PresignGetObject(ctx, &s3.GetObjectInput{
		Bucket:                     aws.String(s.bucket),
		Key:                        aws.String(key),
		ResponseContentDisposition: aws.String(disposition),
		ResponseContentType:        aws.String(ctype),
	}, s3.WithPresignExpires(ttl))
	if err != nil {
		return "", fmt.Errorf("s3blob: download URL of %q: %w", key, err)
	}
	if err := onlyHost(req.SignedHeader); err != nil {
		return "", fmt.Errorf("s3blob: download URL of %q: %w", key, err)
	}
	return req.URL, nil
}

// onlyHost checks that a presigned request signs no header but Host: a
// client given only the URL sends no other.
func onlyHost(signed http.Header) error {
	for name := range signed {
		if !strings.EqualFold(name, "Host") {
			return fmt.Errorf("the presigned request signs header %s, which a client given only the URL would not send", name)
		}
	}
	return nil
}

// fail wraps the error of an S3 call for key: blob.ErrNotFound when the
// object is absent.
func (s *Store) fail(op, key string, err error) error {
	if isNotFound(err) {
		return fmt.Errorf("s3blob: %s %q in bucket %s: %w", op, key, s.bucket, blob.ErrNotFound)
	}
	return fmt.Errorf("s3blob: %s %q in bucket %s: %w", op, key, s.bucket, err)
}

// isNotFound reports whether err says the object is absent: NoSuchKey
// (GetObject), NotFound or a bare 404 (HeadObject, which has no body to
// name the error). A missing bucket is not an absent object.
func isNotFound(err error) bool {
	var noBucket *types.NoSuchBucket
	if errors.As(err, &noBucket) {
		return false
	}
	var noKey *types.NoSuchKey
	var notFound *types.NotFound
	if errors.As(err, &noKey) || errors.As(err, &notFound) {
		return true
	}
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) && apiErr.ErrorCode() == "NoSuchBucket" {
		return false
	}
	var resErr *smithyhttp.ResponseError
	return errors.As(err, &resErr) && resErr.HTTPStatusCode() == http.StatusNotFound
}

// isPreconditionFailed reports whether err is S3's 412: an If-Match that
// does not hold.
func isPreconditionFailed(err error) bool {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) && apiErr.ErrorCode() == "PreconditionFailed" {
		return true
	}
	var resErr *smithyhttp.ResponseError
	return errors.As(err, &resErr) && resErr.HTTPStatusCode() == http.StatusPreconditionFailed
}

// isInvalidRange reports whether err is S3's refusal of a Range (416).
func isInvalidRange(err error) bool {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) && apiErr.ErrorCode() == "InvalidRange" {
		return true
	}
	var resErr *smithyhttp.ResponseError
	return errors.As(err, &resErr) && resErr.HTTPStatusCode() == http.StatusRequestedRangeNotSatisfiable
}

// counter reads r, counting the bytes.
type counter struct {
	r io.Reader
	n int64
}

func (c *counter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
