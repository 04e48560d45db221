package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/crypto/bcrypt"
	"golang.org/x/term"

	"github.com/keydeck/keydeck/internal/people"
)

// hashPassword prints a bcrypt hash for the users file. On a terminal it
// asks twice without echo; otherwise it reads the first line of in, so
// scripts can pipe a password in.
// A password it refuses is an inputError (exit status 2).
func hashPassword(in *os.File, out, prompt io.Writer) error {
	pw, from := "", "read from standard input"
	if term.IsTerminal(int(in.Fd())) {
		fmt.Fprint(prompt, "Password: ")
		a, err := term.ReadPassword(int(in.Fd()))
		fmt.Fprintln(prompt)
		if err != nil {
			return err
		}
		fmt.Fprint(prompt, "Again: ")
		b, err := term.ReadPassword(int(in.Fd()))
		fmt.Fprintln(prompt)
		if err != nil {
			return err
		}
		if string(a) != string(b) {
			return inputError{errors.New("the passwords typed differ")}
		}
		pw, from = string(a), "typed"
	} else {
		line, err := readFirstLine(in)
		if err != nil {
			return err
		}
		pw = line
	}
	hash, err := hashOf(pw)
	if err != nil {
		return inputError{fmt.Errorf("the password %s %w", from, err)}
	}
	fmt.Fprintln(out, hash)
	return nil
}

func readFirstLine(r io.Reader) (string, error) {
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}

func hashOf(pw string) (string, error) {
	switch {
	case pw == "":
		return "", errors.New("is empty")
	case len(pw) < 8:
		return "", errors.New("is shorter than 8 characters")
	case len(pw) > 72:
		return "", errors.New("is longer than 72 bytes (bcrypt ignores the rest)")
	}
	h, err := bcrypt.GenerateFromPassword([]byte(pw), people.PasswordCost)
	return string(h), err
}
