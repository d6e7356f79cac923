// khook-htpasswd <user> < password  →  prints "user:<bcrypt hash>" (an htpasswd line).
package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"golang.org/x/crypto/bcrypt"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: khook-htpasswd <user> < password")
		os.Exit(2)
	}
	pw, err := bufio.NewReader(os.Stdin).ReadString('\n')
	if err != nil && pw == "" {
		fmt.Fprintln(os.Stderr, "khook-htpasswd: no password on stdin")
		os.Exit(2)
	}
	pw = strings.TrimRight(pw, "\r\n")
	hash, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.DefaultCost)
	if err != nil {
		fmt.Fprintln(os.Stderr, "khook-htpasswd:", err)
		os.Exit(1)
	}
	fmt.Printf("%s:%s\n", os.Args[1], hash)
}
