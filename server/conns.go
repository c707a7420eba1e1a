package server

import (
	"net"
	"sync"
)

// perIPListener accepts at most per open connections from one IP address:
// a further connection from it is closed at once, so that one client
// cannot take every connection slot and lock the others out.
type perIPListener struct {
	net.Listener
	per      int
	rejected func()

	mu   sync.Mutex
	open map[string]int
}

func newPerIPListener(ln net.Listener, per int, rejected func()) *perIPListener {
	return &perIPListener{Listener: ln, per: per, rejected: rejected, open: map[string]int{}}
}

// Accept returns the next connection whose address is under its limit.
func (l *perIPListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ip := c.RemoteAddr().String()
		if host, _, err := net.SplitHostPort(ip); err == nil {
			ip = host
		}
		ip = ipKey(ip)
		l.mu.Lock()
		full := l.open[ip] >= l.per
		if !full {
			l.open[ip]++
		}
		l.mu.Unlock()
		if full {
			_ = c.Close()
			l.rejected()
			continue
		}
		return &countedConn{Conn: c, release: sync.OnceFunc(func() {
			l.mu.Lock()
			if l.open[ip]--; l.open[ip] <= 0 {
				delete(l.open, ip)
			}
			l.mu.Unlock()
		})}, nil
	}
}

// countedConn gives its place back when closed (also after a WebSocket
// took it over).
type countedConn struct {
	net.Conn
	release func()
}

func (c *countedConn) Close() error {
	c.release()
	return c.Conn.Close()
}
