import { createSocket, type Socket } from 'node:dgram';

/** Binds a UDP socket; resolves undefined when the port is taken (or binding fails otherwise). */
export function bindUdpSocket(address: string, port: number): Promise<Socket | undefined> {
  return new Promise((resolve) => {
    const socket = createSocket({ type: address.includes(':') ? 'udp6' : 'udp4' });
    const onError = (): void => {
      socket.close();
      resolve(undefined);
    };
    socket.once('error', onError);
    socket.bind(port, address, () => {
      socket.off('error', onError);
      resolve(socket);
    });
  });
}

/** Closes a socket; resolves when closed (at once when it already was). */
export function closeUdpSocket(socket: Socket): Promise<void> {
  return new Promise((resolve) => {
    try {
      socket.close(() => resolve());
    } catch {
      resolve();
    }
  });
}
